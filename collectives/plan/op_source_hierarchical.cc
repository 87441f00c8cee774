// The hierarchical allreduce (allreduce_hierarchical.cc) as a rule: op i of rank r in O(1) (op_source.h).
//
// With g ranks per node and N = p/g nodes, every channel of rank r = n·g + l has
//   A = 2(g-1) ops of the intra-node reduce-scatter (phase 0, step k = j/2, one whole shard each),
//   B = 2(N-1) ops of the inter-node reduce-scatter and B of its allgather (phase 1, step k = j/2,
//       one piece of shard l+1 each),
//   A ops of the intra-node allgather (phase 2),
// sends at even j, receives at odd j, in the order allReduceHierarchical writes them. Channels are
// makePlan's: channel ch works on part chunkOf(count, C, ch), ranks in their own order. Shards and
// pieces of count 0 give empty ops here (makePlan drops them). Without whole nodes it is the flat ring.
#include <algorithm>
#include <vector>

#include "collectives/plan/op_source.h"
#include "collectives/plan/rule_arithmetic.h"
#include "collectives/plan/slice_walk.h"

namespace cclab::plan {
namespace {

using rules::Split;
using rules::wrap;

class HierarchicalAllReduceSource final : public OpSource {
 public:
  HierarchicalAllReduceSource(int nranks, std::int64_t count, PlanShape shape)
      : OpSource({Collective::AllReduce, Algorithm::Hierarchical, nranks, count, 0, 3, shape.channels, shape.ranksPerNode, 0}),
        g_(shape.ranksPerNode),
        nodes_(nranks / shape.ranksPerNode),
        intra_(2 * std::int64_t{g_ - 1}),
        inter_(2 * std::int64_t{nodes_ - 1}),
        perChannel_(2 * intra_ + 2 * inter_) {
    for (int ch = 0; ch < shape.channels; ++ch) {  // channel ch: its part, cut into g shards of N pieces
      shards_.emplace_back(chunkOf(count, shape.channels, ch), g_);
      for (int j = 0; j < g_; ++j) pieces_.emplace_back(shards_.back()(j), nodes_);
    }
  }

  [[nodiscard]] std::int64_t size(int) const override { return perChannel_ * info_.nchannels; }
  [[nodiscard]] std::int64_t channelBegin(int, int channel) const override { return perChannel_ * channel; }

  [[nodiscard]] Op op(int rank, std::int64_t i) const override {
    const int ch = info_.nchannels == 1 ? 0 : static_cast<int>(i / perChannel_);
    std::int64_t j = i - ch * perChannel_;
    const int n = rank / g_, l = rank % g_;
    const bool send = j % 2 == 0;
    Op op;
    op.channel = static_cast<std::uint8_t>(ch);
    Chunk pc;  // the shard or piece the op moves (its offset includes the part's and the shard's)
    bool reduce = false, fromInput = false;
    if (j < intra_ || j >= intra_ + 2 * inter_) {  // inside the node: the ring n·g + (l ± 1), whole shards
      const bool scatter = j < intra_;
      if (!scatter) j -= intra_ + 2 * inter_;
      const std::int64_t k = j / 2;
      op.phase = scatter ? 0 : 2;
      pc = shards_[static_cast<std::size_t>(ch)](wrap(scatter ? (send ? l - k : l - k - 1) : (send ? l + 1 - k : l - k), g_));
      reduce = scatter;
      fromInput = scatter && (!send || k == 0);
      op.peer = n * g_ + wrap(send ? l + 1 : l - 1, g_);
    } else {  // across the nodes: pieces of shard l+1 on the ring of local rank l
      j -= intra_;
      const bool scatter = j < inter_;
      if (!scatter) j -= inter_;
      const std::int64_t k = j / 2;
      op.phase = 1;
      const int piece = wrap(scatter ? (send ? n - k : n - k - 1) : (send ? n + 1 - k : n - k), nodes_);
      pc = pieces_[static_cast<std::size_t>(ch) * static_cast<std::size_t>(g_) + static_cast<std::size_t>(wrap(l + 1, g_))](piece);
      reduce = scatter;
      op.peer = wrap(send ? n + 1 : n - 1, nodes_) * g_ + l;
    }
    const std::int64_t offset = pc.offset;
    const Range in{Buf::Input, offset, pc.count}, out{Buf::Output, offset, pc.count};
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
    if (chunkOf(info_.count, info_.nchannels, info_.nchannels - 1).count < info_.nranks) return OpSource::links(rank);
    const int n = rank / g_, l = rank % g_;
    std::vector<PeerLink> out;
    for (int ch = 0; ch < info_.nchannels; ++ch) {
      out.push_back({n * g_ + wrap(l + 1, g_), true, ch});
      out.push_back({n * g_ + wrap(l - 1, g_), false, ch});
      out.push_back({wrap(n + 1, nodes_) * g_ + l, true, ch});
      out.push_back({wrap(n - 1, nodes_) * g_ + l, false, ch});
    }
    return out;
  }

  [[nodiscard]] std::int64_t maxOpCount() const override {
    const Chunk part = chunkOf(info_.count, info_.nchannels, 0);  // the first part and shard are the largest
    return chunkOf(part.count, g_, 0).count;
  }

  // Over all ranks, each of the four intra-node families (reduce-scatter and allgather, send and
  // receive) covers every shard g-1 times per node, and each of the four inter-node families covers
  // every piece N-1 times.
  [[nodiscard]] std::int64_t opSlices(std::int64_t slice, std::int64_t) const override {
    std::int64_t total = 0;
    for (int ch = 0; ch < info_.nchannels; ++ch) {
      const Chunk part = chunkOf(info_.count, info_.nchannels, ch);
      std::int64_t shards = 0, pieces = 0;
      const std::int64_t qs = part.count / g_, rs = part.count % g_;
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
  int g_, nodes_;
  std::int64_t intra_, inter_, perChannel_;
  std::vector<Split> shards_;  // [channel]: its part cut into g shards
  std::vector<Split> pieces_;  // [channel * g + shard]: the shard cut into N pieces
};

}  // namespace

std::unique_ptr<OpSource> hierarchicalAllReduceSource(int nranks, std::int64_t count, PlanShape shape) {
  const int g = shape.ranksPerNode;
  if (g <= 1 || g >= nranks || nranks % g != 0) return ringAllReduceSource(nranks, count, shape, Algorithm::Hierarchical);
  return std::make_unique<HierarchicalAllReduceSource>(nranks, count, shape);
}

}  // namespace cclab::plan
