// Predictor: dispatch of one prediction to replay() or the closed forms (predictor.h).
#include "sim/predictor.h"

#include <algorithm>

#include "collectives/core/errors.h"
#include "sim/analytic.h"
#include "sim/effective_params.h"

namespace cclab::sim {

std::string_view name(Model m) { return m == Model::Replay ? "replay" : "analytic"; }

Model parseModel(std::string_view text) {
  for (Model m : {Model::Replay, Model::Analytic})
    if (text == name(m)) return m;
  throw InvalidArgument("--model must be replay or analytic (got '" + std::string(text) + "')");
}

std::int64_t sliceElemsOf(std::int64_t sliceBytes, std::int64_t elemSize) {
  return sliceBytes > 0 ? std::max<std::int64_t>(1, sliceBytes / elemSize) : sliceBytes;
}

Model Predictor::modelFor(SimAlgorithm a) const { return infoOf(a).hierarchical ? Model::Analytic : model; }

Micros Predictor::operator()(plan::Collective c, SimAlgorithm a, int p, std::int64_t count, ReplayResult* detail) const {
  const SimAlgorithmInfo& info = infoOf(a);
  if (info.hierarchical)
    return hierarchicalAllReduce(topo.spec().nodes, topo.spec().gpusPerNode, count * elemSize, info.planAlgorithm,
                                 hierarchicalParams(topo));
  const plan::Algorithm ran = plan::generatedAlgorithm(c, info.planAlgorithm);
  if (model == Model::Analytic) {
    const std::int64_t slice = sliceBytes == kAutoSlice ? autoSliceElems(c, ran, p, count, elemSize)
                                                        : sliceElemsOf(sliceBytes, elemSize);
    return predictOn(topo, {.collective = c, .algorithm = ran, .nranks = p, .count = count, .elemSize = elemSize,
                            .sliceElems = slice});
  }
  if (p > kMaxReplayRanks)
    throw InvalidArgument("a replay of " + std::to_string(p) + " ranks is more than a replay runs (at most " +
                          std::to_string(kMaxReplayRanks) + " ranks); use --model analytic");
  const auto ops = plan::makeOpSource(c, ran, p, count, root);  // rings: the rule, never the whole plan
  ReplayOptions o = replayOptions;
  o.elemSize = elemSize;
  o.sliceElems = sliceElemsOf(sliceBytes, elemSize);
  ReplayResult r = replay(*ops, topo, o);
  const Micros t = r.time;
  if (detail) *detail = std::move(r);
  return t;
}

std::string ranAlgorithmName(plan::Collective c, SimAlgorithm a) {
  const SimAlgorithmInfo& info = infoOf(a);
  return info.hierarchical ? info.name : std::string(plan::name(plan::generatedAlgorithm(c, info.planAlgorithm)));
}

}  // namespace cclab::sim
