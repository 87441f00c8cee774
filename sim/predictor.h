// One prediction of one collective call: by replaying its plan on a topology or by the closed forms
// (analytic.h); hier-tree has no plan, so it is always analytic. Plans are made in the topology's
// shape: plan::PlanShape{channels, Topology::ranksPerNode(), nicsPerNode: a cluster's NICs per node}.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>

#include "collectives/plan/op_source.h"
#include "collectives/plan/plan.h"
#include "sim/algorithms.h"
#include "sim/analytic.h"
#include "sim/protocol.h"
#include "sim/replay.h"
#include "sim/topology.h"

namespace cclab::sim {

enum class Model : std::uint8_t { Replay, Analytic };
std::string_view name(Model m);
Model parseModel(std::string_view text);  // "replay" or "analytic"; InvalidArgument naming --model

// Slice size in bytes as the command line gives it: > 0 a size, 0 auto, -1 whole ops.
inline constexpr std::int64_t kAutoSlice = 0;
inline constexpr std::int64_t kWholeOps = -1;
// The same in elements of `elemSize` bytes (replay's ReplayOptions::sliceElems, analytic Schedule).
std::int64_t sliceElemsOf(std::int64_t sliceBytes, std::int64_t elemSize);

struct Predictor {
  const Topology& topo;
  Model model = Model::Replay;
  std::int64_t sliceBytes = kAutoSlice;
  std::int64_t elemSize = 4;
  int root = 0;
  ReplayOptions replayOptions = {};  // stragglers, trace
  int channels = 0;                  // 0: the topology's (Topology::channels())
  ProtocolChoice protocol = ProtocolChoice::Auto;  // one protocol per call (protocol.h); forced needs ll_protocol
  // The closed forms' α, β (effectiveParams) per (collective, algorithm, ranks, channels), kept across
  // this Predictor's analytic predictions and its copies' (same topology): they do not depend on the
  // size, and each costs a route of every message of the pattern, O(ranks); a crossover search predicts
  // some 130 sizes, which made `scale` on 2^16 nodes take minutes.
  using ParamsKey = std::tuple<plan::Collective, plan::Algorithm, int, int>;
  std::shared_ptr<std::map<ParamsKey, CostParams>> paramsMemo = std::make_shared<std::map<ParamsKey, CostParams>>();

  // The model really used for `a` (hier-tree: always analytic).
  [[nodiscard]] Model modelFor(SimAlgorithm a) const;
  // The shape plans are made in, and the analytic model assumes.
  [[nodiscard]] plan::PlanShape shape() const;
  // Time of collective c with algorithm a on p ranks, NCCL API count `count`, and the protocol all its
  // messages took; a replay's details go to `detail` when given.
  Prediction predict(plan::Collective c, SimAlgorithm a, int p, std::int64_t count, ReplayResult* detail = nullptr) const;
  // Op-slices the replay of this prediction would run, summed over the protocol runs it makes
  // (replayOpSlices, replay.h); 0 where the analytic model predicts it. Counting stops past `limit`. The
  // cost of a prediction that the commands predicting many add up (replay_work.h).
  [[nodiscard]] std::int64_t replayOpSlices(plan::Collective c, SimAlgorithm a, int p, std::int64_t count, std::int64_t limit) const;
  // The time alone.
  Micros operator()(plan::Collective c, SimAlgorithm a, int p, std::int64_t count, ReplayResult* detail = nullptr) const {
    return predict(c, a, p, count, detail).time;
  }
  // At most how many trace events predict() records for this call with replayOptions.trace set
  // (replay.h, traceEventBound), computed without replaying; 0 where no replay runs (analytic, nvls).
  [[nodiscard]] std::int64_t traceEventBound(plan::Collective c, SimAlgorithm a, int p, std::int64_t count) const;
};

// NVLS allreduce of `bytes` on p ranks (analytic_nvls.cc): one NVSwitch node, or whole nodes of a
// cluster (NVLS in each node, a ring across nodes); Simple only (a forced LL or LL128 is refused);
// InvalidArgument on a topology without NVLS.
Prediction predictNvls(const Topology& topo, int p, Bytes bytes, ProtocolChoice protocol);

// The name of the algorithm really run for `a` on c: Broadcast and Reduce run "dbtree" as the plain
// tree and "ring" as the chain (plan::generatedAlgorithm), so the tables say "tree" and "chain".
std::string ranAlgorithmName(plan::Collective c, SimAlgorithm a);

}  // namespace cclab::sim
