// The hierarchical allreduce (allreduce_hierarchical.cc) as a rule: op i of rank r in O(1) (op_source.h).
//
// With g ranks per node and N = p/g nodes, every channel of rank r = n·g + l has
//   A = 2(g-1)N ops of the intra-node reduce-scatter (step k = j / 2N, piece m = (j/2) mod N),
//   B = 2(N-1) ops of the inter-node reduce-scatter and B of its allgather (step k = j/2),
//   A ops of the intra-node allgather,
// sends at even j, receives at odd j, in the order allReduceHierarchical writes them. Channels are
// makePlan's: channel ch works on part chunkOf(count, C, ch), ranks in their own order. Pieces of
// count 0 give empty ops here (makePlan drops them). Without whole nodes it is the flat ring.
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
      : OpSource({Collective::AllReduce, Algorithm::Hierarchical, nranks, count, 0, 1, shape.channels, shape.ranksPerNode, 0}),
        g_(shape.ranksPerNode),
        nodes_(nranks / shape.ranksPerNode),
        intra_(2 * std::int64_t{g_ - 1} * nodes_),
        inter_(2 * std::int64_t{nodes_ - 1}),
        perChannel_(2 * intra_ + 2 * inter_) {
    for (int ch = 0; ch < shape.channels; ++ch) {  // channel ch: its part, cut into g shards of N pieces
      const Split shards(chunkOf(count, shape.channels, ch), g_);
      for (int j = 0; j < g_; ++j) pieces_.emplace_back(shards(j), nodes_);
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
    int shard = 0;
    std::int64_t piece = 0;
    bool reduce = false, fromInput = false;
    if (j < intra_ || j >= intra_ + 2 * inter_) {  // inside the node: the ring n·g + (l ± 1)
      const bool scatter = j < intra_;
      if (!scatter) j -= intra_ + 2 * inter_;
      const std::int64_t half = j / 2, k = half / nodes_;
      piece = half - k * nodes_;
      shard = wrap(scatter ? (send ? l - k : l - k - 1) : (send ? l + 1 - k : l - k), g_);
      reduce = scatter;
      fromInput = scatter && (!send || k == 0);
      op.peer = n * g_ + wrap(send ? l + 1 : l - 1, g_);
    } else {  // across the nodes: shard l+1 on the ring of local rank l
      j -= intra_;
      const bool scatter = j < inter_;
      if (!scatter) j -= inter_;
      const std::int64_t k = j / 2;
      shard = wrap(l + 1, g_);
      piece = wrap(scatter ? (send ? n - k : n - k - 1) : (send ? n + 1 - k : n - k), nodes_);
      reduce = scatter;
      op.peer = wrap(send ? n + 1 : n - 1, nodes_) * g_ + l;
    }
    const Chunk pc = pieces_[static_cast<std::size_t>(ch) * static_cast<std::size_t>(g_) + static_cast<std::size_t>(shard)](
        static_cast<int>(piece));
    const std::int64_t offset = pc.offset;  // includes the part's and the shard's
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
    const Chunk part = chunkOf(info_.count, info_.nchannels, 0);
    return chunkOf(chunkOf(part.count, g_, 0).count, nodes_, 0).count;
  }

  // Over all ranks every piece is sent and received (g-1)·N times per intra-node family and N-1 times
  // per inter-node family, four families each (reduce-scatter and allgather, send and receive).
  [[nodiscard]] std::int64_t opSlices(std::int64_t slice, std::int64_t) const override {
    std::int64_t total = 0;
    const std::int64_t uses = 4 * (std::int64_t{g_ - 1} * nodes_ + (nodes_ - 1));
    for (int ch = 0; ch < info_.nchannels; ++ch) {
      const Chunk part = chunkOf(info_.count, info_.nchannels, ch);
      std::int64_t pieces = 0;
      const std::int64_t qs = part.count / g_, rs = part.count % g_;
      for (const auto& [shardCount, shards] : {std::pair{qs + 1, rs}, std::pair{qs, g_ - rs}}) {
        const std::int64_t q = shardCount / nodes_, rem = shardCount % nodes_;
        pieces += shards * (rem * sliceCount(q + 1, slice) + (nodes_ - rem) * sliceCount(q, slice));
      }
      total += uses * pieces;
    }
    return total;
  }

 private:
  int g_, nodes_;
  std::int64_t intra_, inter_, perChannel_;
  std::vector<Split> pieces_;  // [channel * g + shard]: the shard cut into N pieces
};

}  // namespace

std::unique_ptr<OpSource> hierarchicalAllReduceSource(int nranks, std::int64_t count, PlanShape shape) {
  const int g = shape.ranksPerNode;
  if (g <= 1 || g >= nranks || nranks % g != 0) return ringAllReduceSource(nranks, count, shape, Algorithm::Hierarchical);
  return std::make_unique<HierarchicalAllReduceSource>(nranks, count, shape);
}

}  // namespace cclab::plan
