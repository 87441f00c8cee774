// Predictor: dispatch of one prediction to replay() or the closed forms (predictor.h).
#include "sim/predictor.h"

#include <algorithm>

#include "collectives/core/errors.h"
#include "sim/analytic.h"
#include "sim/effective_params.h"

namespace cclab::sim {
namespace {

// NCCL's tree allreduce: auto slices are NCCL's tree chunks (analytic.h, ncclTreeChunkElems) in both
// models; the others slice a quarter of their largest op (replay.h, autoSliceElems).
bool isNcclTree(plan::Collective c, plan::Algorithm ran) { return c == plan::Collective::AllReduce && ran == plan::Algorithm::Tree; }

// What a replay of one prediction runs: the plan's ops and the options. predict() replays it,
// replayOpSlices() counts it, so the count is of the very replay.
struct ReplayInput {
  std::unique_ptr<plan::OpSource> ops;
  ReplayOptions options;
};

ReplayInput replayInput(const Predictor& pr, plan::Collective c, SimAlgorithm a, int p, std::int64_t count) {
  if (p > kMaxReplayRanks)
    throw InvalidArgument("a replay of " + std::to_string(p) + " ranks is more than a replay runs (at most " +
                          std::to_string(kMaxReplayRanks) + " ranks); use --model analytic");
  const plan::PlanShape sh = pr.shape();
  const plan::Algorithm ran = plan::generatedAlgorithm(c, infoOf(a).planAlgorithm);
  ReplayInput in{plan::makeOpSource(c, ran, p, count, pr.root, sh), pr.replayOptions};  // ring, hier: the rule, never the whole plan
  in.options.elemSize = pr.elemSize;
  in.options.sliceElems = pr.sliceBytes == kAutoSlice && isNcclTree(c, ran)
                              ? ncclTreeChunkElems(count, pr.elemSize, sh.channels, p, sh.ranksPerNode)
                              : sliceElemsOf(pr.sliceBytes, pr.elemSize);
  in.options.protocol = pr.protocol;
  return in;
}

}  // namespace

std::string_view name(Model m) { return m == Model::Replay ? "replay" : "analytic"; }

Model parseModel(std::string_view text) {
  for (Model m : {Model::Replay, Model::Analytic})
    if (text == name(m)) return m;
  throw InvalidArgument("--model must be replay or analytic (got '" + std::string(text) + "')");
}

std::int64_t sliceElemsOf(std::int64_t sliceBytes, std::int64_t elemSize) {
  return sliceBytes > 0 ? std::max<std::int64_t>(1, sliceBytes / elemSize) : sliceBytes;
}

Model Predictor::modelFor(SimAlgorithm a) const {
  const SimAlgorithmInfo& i = infoOf(a);
  return i.analyticOnly ? Model::Analytic : i.replayOnly ? Model::Replay : model;
}

plan::PlanShape Predictor::shape() const {
  // A cluster's NICs per node (GPU g of a node uses NIC floor(g·K/G), as the topology wires them), so
  // ring and tree channels spread over them (plan::ringOrder, allreduce_tree.cc).
  const int nics = topo.spec().kind == TopologyKind::Cluster ? topo.spec().nicsPerNode : 0;
  return {.channels = channels > 0 ? channels : topo.channels(), .ranksPerNode = topo.ranksPerNode(), .nicsPerNode = nics};
}

std::int64_t Predictor::traceEventBound(plan::Collective c, SimAlgorithm a, int p, std::int64_t count) const {
  if (a == SimAlgorithm::Nvls || modelFor(a) == Model::Analytic) return 0;
  const ReplayInput in = replayInput(*this, c, a, p, count);
  return sim::traceEventBound(*in.ops, in.options);
}

Prediction Predictor::predict(plan::Collective c, SimAlgorithm a, int p, std::int64_t count, ReplayResult* detail) const {
  const SimAlgorithmInfo& info = infoOf(a);
  const plan::PlanShape sh = shape();
  if (a == SimAlgorithm::Nvls) return predictNvls(topo, p, count * elemSize, protocol);
  const plan::Algorithm ran = plan::generatedAlgorithm(c, info.planAlgorithm);
  if (modelFor(a) == Model::Analytic) {
    const bool ncclTree = isNcclTree(c, ran);
    const std::int64_t treeChunk = ncclTree ? ncclTreeChunkElems(count, elemSize, sh.channels, p, sh.ranksPerNode) : 0;
    // Auto slicing looks at one channel's part, as the closed form does (predictOn; the double binary
    // tree's closed form halves its count again, so its part is 2·count / its channel count).
    const bool dbtree = c == plan::Collective::AllReduce && ran == plan::Algorithm::DoubleBinaryTree;
    const std::int64_t part = dbtree ? count * 2 / std::max(2, sh.channels + sh.channels % 2) : count / sh.channels;
    const std::int64_t slice = sliceBytes != kAutoSlice ? sliceElemsOf(sliceBytes, elemSize)
                               : ncclTree              ? treeChunk
                                                       : autoSliceElems(c, ran, p, part, elemSize, sh.ranksPerNode);
    if (info.hierarchical) {  // the two-level closed forms, with the cluster's intra and inter parameters
      const int N = topo.spec().nodes, G = topo.spec().gpusPerNode;
      // makePlan cuts every part into the blocks of the smallest part (plan::hierarchicalBlocks).
      const std::int64_t part = count / sh.channels;
      const HierarchicalRounds rounds = hierarchicalRounds(
          part, G, N, slice, plan::hierarchicalBlocksOf(p, count, sh));
      const HierarchicalParams h = hierarchicalParams(topo, sh.channels);
      const bool tree = info.planAlgorithm == plan::Algorithm::Tree;  // hier-tree: its unpipelined form, as before
      // hier-ring: the node rings move shards, the network ring pieces; all on one protocol per call.
      return fastestProtocol(protocolCandidates(topo.spec(), protocol), [&](Protocol pr) {
        const HierarchicalParams hp{withProtocol(h.intra, pr), withProtocol(h.inter, pr)};
        return h.inter.startup + hierarchicalAllReduce(N, G, part * elemSize, rounds,
                                                       tree ? plan::Algorithm::Tree : plan::Algorithm::Ring, hp);
      });
    }
    auto [at, fresh] = paramsMemo->try_emplace(ParamsKey{c, ran, p, sh.channels});
    if (fresh) at->second = effectiveParams(topo, c, ran, p, sh);
    return predictOn(topo, at->second,
                     {.collective = c, .algorithm = ran, .nranks = p, .count = count, .elemSize = elemSize, .sliceElems = slice,
                      .ranksPerNode = sh.ranksPerNode},
                     sh, protocol);
  }
  ReplayInput in = replayInput(*this, c, a, p, count);
  ReplayResult r = replay(*in.ops, topo, in.options);  // auto: one run per protocol on the same op source
  const Prediction out{r.time, r.protocol};
  if (detail) *detail = std::move(r);
  return out;
}

std::int64_t Predictor::replayOpSlices(plan::Collective c, SimAlgorithm a, int p, std::int64_t count, std::int64_t limit) const {
  if (a == SimAlgorithm::Nvls || modelFor(a) == Model::Analytic) return 0;
  const ReplayInput in = replayInput(*this, c, a, p, count);
  return sim::replayOpSlices(*in.ops, topo, in.options, limit);
}

Prediction predictNvls(const Topology& topo, int p, Bytes bytes, ProtocolChoice protocol) {
  const TopologySpec& s = topo.spec();
  if (s.nvlsBandwidth <= 0)
    throw InvalidArgument("--algo nvls: topology '" + s.name + "' has no NVLS (its nvls_gbps is 0: the switch does not reduce)");
  const std::vector<Protocol> candidates = protocolCandidates(s, protocol, kNvlsProtocols);
  if (s.kind == TopologyKind::Cluster && p > s.gpusPerNode) {  // several nodes: NVLS in each, a ring across
    if (p % s.gpusPerNode != 0)
      throw InvalidArgument("--algo nvls: " + std::to_string(p) + " ranks are not whole nodes of " + std::to_string(s.gpusPerNode));
    const HierarchicalParams h = hierarchicalParams(topo, 1);  // α per traversal, one GPU's share of the NICs
    return {nvlsAllReduceAcross(s.gpusPerNode, p / s.gpusPerNode, bytes, h.intra, h.inter, s.nvlsBandwidth), candidates.front()};
  }
  // A GPU's port: the ring pattern has one flow in and one out per port (α: a GPU-to-GPU route).
  const CostParams k = effectiveParams(topo, plan::Collective::AllReduce, plan::Algorithm::Ring, p);
  // The form counts its own latency traversals (a reduce round trip and a Simple store), so α is the
  // route's one-traversal latency here, not withProtocol's.
  return {nvlsAllReduce(p, bytes, k, s.nvlsBandwidth), candidates.front()};
}

std::string ranAlgorithmName(plan::Collective c, SimAlgorithm a) {
  const SimAlgorithmInfo& info = infoOf(a);
  return info.hierarchical || a == SimAlgorithm::Nvls ? info.name : std::string(plan::name(plan::generatedAlgorithm(c, info.planAlgorithm)));
}

}  // namespace cclab::sim
