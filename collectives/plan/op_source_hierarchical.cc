// The hierarchical allreduce (allreduce_hierarchical.cc) as a rule: op i of rank r in O(1) (op_source.h).
//
// With g ranks per node, N = p/g nodes and B blocks (hierarchicalBlocks), part ch of the data (makePlan's
// chunkOf(count, C, ch)) has two lanes: channel 2ch, the node lane, with its groups of A = 2(g-1) ops
// (a node-ring reduce-scatter or allgather of one block's whole shards, hierarchical_schedule.h), and
// channel 2ch+1, the network lane, with B groups of 4(N-1) ops (the reduce-scatter, then the allgather
// of block b's pieces of shard l+1 on the ring of local rank l). Sends at even positions of a group,
// receives at odd ones, in the order allReduceHierarchical writes them. Shards and pieces of count 0
// give empty ops here (makePlan drops them). Without whole nodes it is the flat ring.
#include <algorithm>
#include <string>
#include <vector>

#include "collectives/core/errors.h"

#include "collectives/plan/hierarchical_schedule.h"
#include "collectives/plan/op_source.h"
#include "collectives/plan/rule_arithmetic.h"
#include "collectives/plan/slice_walk.h"

namespace cclab::plan {
namespace {

using rules::Split;
using rules::wrap;

// The header of the rule's plan: 2 lanes per channel of the shape, B + 2 phases, the schedule's deps.
PlanInfo hierInfo(int nranks, std::int64_t count, PlanShape shape, int blocks) {
  PlanInfo info{Collective::AllReduce, Algorithm::Hierarchical, nranks, count, 0, blocks + 2, 2 * shape.channels, shape.ranksPerNode, 0, {}};
  const auto lanes = hier::deps(blocks);
  for (int ch = 0; ch < shape.channels; ++ch)
    for (PhaseDep d : lanes) {
      d.channel += 2 * ch;
      d.afterChannel += 2 * ch;
      info.deps.push_back(d);
    }
  return info;
}

class HierarchicalAllReduceSource final : public OpSource {
 public:
  HierarchicalAllReduceSource(int nranks, std::int64_t count, PlanShape shape, int blocks)
      : OpSource(hierInfo(nranks, count, shape, blocks)),
        g_(shape.ranksPerNode),
        nodes_(nranks / shape.ranksPerNode),
        blocks_(blocks),
        parts_(shape.channels),
        group_(2 * std::int64_t{g_ - 1}),
        net_(4 * std::int64_t{nodes_ - 1}),
        nodeOps_(group_ * 2 * blocks),
        perPart_(nodeOps_ + net_ * blocks),
        nodeGroups_(hier::nodeGroups(blocks)) {
    for (int ch = 0; ch < parts_; ++ch) {  // part ch, cut into B blocks of g shards of N pieces
      const Split part(chunkOf(count, parts_, ch), blocks);
      for (int b = 0; b < blocks; ++b) {
        shards_.emplace_back(part(b), g_);
        for (int j = 0; j < g_; ++j) pieces_.emplace_back(shards_.back()(j), nodes_);
      }
    }
  }

  [[nodiscard]] std::int64_t size(int) const override { return perPart_ * parts_; }
  [[nodiscard]] std::int64_t channelBegin(int, int channel) const override {
    return perPart_ * (channel / 2) + (channel % 2 == 0 ? 0 : nodeOps_);
  }

  [[nodiscard]] Op op(int rank, std::int64_t i) const override {
    const int ch = parts_ == 1 ? 0 : static_cast<int>(i / perPart_);
    std::int64_t j = i - ch * perPart_;
    const int n = rank / g_, l = rank % g_;
    Op op;
    Chunk pc;  // the shard or piece the op moves (its offset includes the part's and the block's)
    bool send = false, reduce = false, fromInput = false;
    if (j < nodeOps_) {  // the node lane: the ring n·g + (l ± 1), whole shards
      const hier::Group& grp = nodeGroups_[static_cast<std::size_t>(j / group_)];
      j %= group_;
      const std::int64_t k = j / 2;
      send = j % 2 == 0;
      const bool scatter = grp.part == hier::Part::NodeScatter;
      op.channel = static_cast<std::uint8_t>(2 * ch + hier::kNodeLane);
      op.phase = grp.phase;
      pc = shards_[index(ch, grp.block)](wrap(scatter ? (send ? l - k : l - k - 1) : (send ? l + 1 - k : l - k), g_));
      reduce = scatter;
      fromInput = scatter && (!send || k == 0);
      op.peer = n * g_ + wrap(send ? l + 1 : l - 1, g_);
    } else {  // the network lane: block b's pieces of shard l+1 on the ring of local rank l
      j -= nodeOps_;
      const int b = static_cast<int>(j / net_);
      j %= net_;
      const bool scatter = j < net_ / 2;
      if (!scatter) j -= net_ / 2;
      const std::int64_t k = j / 2;
      send = j % 2 == 0;
      op.channel = static_cast<std::uint8_t>(2 * ch + hier::kNetworkLane);
      op.phase = b + 1;
      const int piece = wrap(scatter ? (send ? n - k : n - k - 1) : (send ? n + 1 - k : n - k), nodes_);
      pc = pieces_[index(ch, b) * static_cast<std::size_t>(g_) + static_cast<std::size_t>(wrap(l + 1, g_))](piece);
      reduce = scatter;
      op.peer = wrap(send ? n + 1 : n - 1, nodes_) * g_ + l;
    }
    const Range in{Buf::Input, pc.offset, pc.count}, out{Buf::Output, pc.offset, pc.count};
    if (send) {
      op.kind = OpKind::Send;
      op.src = fromInput ? in : out;
    } else {
      op.kind = reduce ? OpKind::RecvReduce : OpKind::Recv;
      if (reduce) op.src = fromInput ? in : out;
      op.dst = out;
    }
    return op;
  }

  // Where every piece has an element (part >= p), every op is non-empty and each channel uses the
  // node ring (next, prev) and the ring across nodes (up, down); otherwise the scan.
  [[nodiscard]] std::vector<PeerLink> links(int rank) const override {
    const Chunk lastPart = chunkOf(info_.count, parts_, parts_ - 1);
    if (chunkOf(lastPart.count, blocks_, blocks_ - 1).count < info_.nranks) return OpSource::links(rank);
    const int n = rank / g_, l = rank % g_;
    std::vector<PeerLink> out;
    for (int ch = 0; ch < parts_; ++ch) {
      out.push_back({n * g_ + wrap(l + 1, g_), true, 2 * ch + hier::kNodeLane});
      out.push_back({n * g_ + wrap(l - 1, g_), false, 2 * ch + hier::kNodeLane});
      out.push_back({wrap(n + 1, nodes_) * g_ + l, true, 2 * ch + hier::kNetworkLane});
      out.push_back({wrap(n - 1, nodes_) * g_ + l, false, 2 * ch + hier::kNetworkLane});
    }
    return out;
  }

  [[nodiscard]] std::int64_t maxOpCount() const override { return shards_.front()(0).count; }  // the first is the largest

  // Over all ranks, each of the four intra-node families (reduce-scatter and allgather, send and
  // receive) covers every shard g-1 times per node, and each of the four inter-node families covers
  // every piece N-1 times.
  [[nodiscard]] std::int64_t opSlices(std::int64_t slice, std::int64_t) const override {
    std::int64_t total = 0;
    for (std::size_t blk = 0; blk < shards_.size(); ++blk) {
      const Split& split = shards_[blk];
      std::int64_t shards = 0, pieces = 0;
      const std::int64_t qs = split.q, rs = split.rem;
      for (const auto& [shardCount, many] : {std::pair{qs + 1, rs}, std::pair{qs, g_ - rs}}) {
        const std::int64_t q = shardCount / nodes_, rem = shardCount % nodes_;
        shards += many * sliceCount(shardCount, slice);
        pieces += many * (rem * sliceCount(q + 1, slice) + (nodes_ - rem) * sliceCount(q, slice));
      }
      total += 4 * std::int64_t{g_ - 1} * nodes_ * shards + 4 * std::int64_t{nodes_ - 1} * pieces;
    }
    return total;
  }

 private:
  [[nodiscard]] std::size_t index(int part, int block) const {
    return static_cast<std::size_t>(part) * static_cast<std::size_t>(blocks_) + static_cast<std::size_t>(block);
  }

  int g_, nodes_, blocks_, parts_;
  std::int64_t group_, net_, nodeOps_, perPart_;
  std::vector<hier::Group> nodeGroups_;
  std::vector<Split> shards_;  // [part * B + block]: the block cut into g shards
  std::vector<Split> pieces_;  // [(part * B + block) * g + shard]: the shard cut into N pieces
};

}  // namespace

std::unique_ptr<OpSource> hierarchicalAllReduceSource(int nranks, std::int64_t count, PlanShape shape) {
  const int g = shape.ranksPerNode;
  if (g <= 1 || g >= nranks || nranks % g != 0) return ringAllReduceSource(nranks, count, shape, Algorithm::Hierarchical);
  if (2 * shape.channels > kMaxChannels)
    throw InvalidArgument("makePlan: " + std::to_string(shape.channels) + " channels of 2 lanes each are more than " +
                          std::to_string(kMaxChannels) + " channels");
  const int blocks = hierarchicalBlocksOf(nranks, count, shape);
  return std::make_unique<HierarchicalAllReduceSource>(nranks, count, shape, blocks);
}

}  // namespace cclab::plan
