// The ring allreduce (allreduce_ring.cc) as a rule: op i of rank r in O(1) (op_source.h).
//
// makePlan's C-channel ring (channels.cc): channel ch runs the one-channel ring over part ch of the
// data (chunkOf(count, C, ch)) in rank order ringOrder(p, ranksPerNode, ch, nicsPerNode); rank r is at position
// v there. Every channel has L = 4(p-1) ops (1 for p = 1: a copy), so op i is op j = i mod L of
// channel i / L: step j/2 (send when j is even, receive when odd); steps 0..p-2 are the
// reduce-scatter, p-1..2p-3 the allgather, exactly as allReduceRing writes them. Chunks of count 0
// give empty ops here (makePlan drops them).
#include <algorithm>
#include <vector>

#include "collectives/plan/op_source.h"
#include "collectives/plan/rule_arithmetic.h"
#include "collectives/plan/slice_walk.h"

namespace cclab::plan {
namespace {

using rules::Split;
using rules::wrap;

// Sum of sliceCount over the n chunks chunkOf(total, n, i).
std::int64_t chunkSlices(std::int64_t total, int n, std::int64_t slice) {
  const std::int64_t q = total / n, rem = total % n;
  return rem * sliceCount(q + 1, slice) + (n - rem) * sliceCount(q, slice);
}

class RingAllReduceSource final : public OpSource {
 public:
  RingAllReduceSource(int nranks, std::int64_t count, PlanShape shape, Algorithm named)
      : OpSource({Collective::AllReduce, named, nranks, count, 0, 1, shape.channels, shape.ranksPerNode, 0, {}}),
        perChannel_(nranks == 1 ? 1 : 4 * std::int64_t{nranks - 1}) {
    for (int ch = 0; ch < shape.channels; ++ch) chunks_.emplace_back(chunkOf(count, shape.channels, ch), nranks);
    // Rank orders only where they differ from the identity (ringOrder with ranksPerNode; the
    // hierarchical algorithm's flat fallback always uses the identity).
    const int g = named == Algorithm::Ring ? shape.ranksPerNode : 0;
    if (g > 1 && g < nranks && nranks % g == 0)
      for (int ch = 0; ch < shape.channels; ++ch) {
        order_.push_back(ringOrder(nranks, g, ch, shape.nicsPerNode));
        std::vector<int> pos(static_cast<std::size_t>(nranks));
        for (int v = 0; v < nranks; ++v) pos[static_cast<std::size_t>(order_.back()[static_cast<std::size_t>(v)])] = v;
        position_.push_back(std::move(pos));
      }
  }

  [[nodiscard]] std::int64_t size(int) const override { return perChannel_ * info_.nchannels; }
  [[nodiscard]] std::int64_t channelBegin(int, int channel) const override { return perChannel_ * channel; }

  [[nodiscard]] Op op(int rank, std::int64_t i) const override {
    const int p = info_.nranks;
    const int ch = info_.nchannels == 1 ? 0 : static_cast<int>(i / perChannel_);
    const std::int64_t j = i - ch * perChannel_;
    Op op;
    op.channel = static_cast<std::uint8_t>(ch);
    if (p == 1) {
      const Chunk part = chunkOf(info_.count, info_.nchannels, ch);
      op.kind = OpKind::Copy;
      op.src = {Buf::Input, part.offset, part.count};
      op.dst = {Buf::Output, part.offset, part.count};
      return op;
    }
    const int v = position(ch, rank);
    const std::int64_t step = j / 2;
    const bool send = j % 2 == 0;
    const bool scatter = step < p - 1;
    const std::int64_t k = scatter ? step : step - (p - 1);
    // reduce-scatter: send chunk v-k, receive chunk v-k-1; allgather: send chunk v+1-k, receive v-k.
    const std::int64_t index = scatter ? (send ? v - k : v - k - 1) : (send ? v + 1 - k : v - k);
    const Chunk c = chunks_[static_cast<std::size_t>(ch)](wrap(index, p));  // offsets include the part's
    const Range in{Buf::Input, c.offset, c.count}, out{Buf::Output, c.offset, c.count};
    if (send) {
      op.kind = OpKind::Send;
      op.peer = rankAt(ch, wrap(v + 1, p));
      op.src = scatter && k == 0 ? in : out;
    } else {
      op.kind = scatter ? OpKind::RecvReduce : OpKind::Recv;
      op.peer = rankAt(ch, wrap(v - 1, p));
      if (scatter) op.src = in;
      op.dst = out;
    }
    return op;
  }

  // Where every chunk has an element (part >= p), every op is non-empty and each channel uses next
  // and prev; otherwise the scan (empty ops use no connection).
  [[nodiscard]] std::vector<PeerLink> links(int rank) const override {
    const int p = info_.nranks;
    if (p == 1) return {};
    if (chunkOf(info_.count, info_.nchannels, info_.nchannels - 1).count < p) return OpSource::links(rank);
    std::vector<PeerLink> out;
    for (int ch = 0; ch < info_.nchannels; ++ch) {
      const int v = position(ch, rank);
      out.push_back({rankAt(ch, wrap(v + 1, p)), true, ch});
      out.push_back({rankAt(ch, wrap(v - 1, p)), false, ch});
    }
    return out;
  }

  [[nodiscard]] std::int64_t maxOpCount() const override {
    const Chunk part = chunkOf(info_.count, info_.nchannels, 0);  // the first part and chunk are the largest
    return info_.nranks == 1 ? part.count : chunkOf(part.count, info_.nranks, 0).count;
  }

  // Over all ranks, each of the four op families (reduce-scatter send and receive, allgather send and
  // receive) covers every chunk p-1 times.
  [[nodiscard]] std::int64_t opSlices(std::int64_t slice, std::int64_t) const override {
    std::int64_t total = 0;
    for (int ch = 0; ch < info_.nchannels; ++ch) {
      const Chunk part = chunkOf(info_.count, info_.nchannels, ch);
      total += info_.nranks == 1 ? sliceCount(part.count, slice)
                                 : 4 * std::int64_t{info_.nranks - 1} * chunkSlices(part.count, info_.nranks, slice);
    }
    return total;
  }

 private:
  [[nodiscard]] int position(int ch, int rank) const {
    return position_.empty() ? rank : position_[static_cast<std::size_t>(ch)][static_cast<std::size_t>(rank)];
  }
  [[nodiscard]] int rankAt(int ch, int v) const {
    return order_.empty() ? v : order_[static_cast<std::size_t>(ch)][static_cast<std::size_t>(v)];
  }

  std::int64_t perChannel_;
  std::vector<Split> chunks_;                       // per channel: its part cut into p chunks
  std::vector<std::vector<int>> order_, position_;  // per channel; empty: the identity
};

}  // namespace

std::unique_ptr<OpSource> ringAllReduceSource(int nranks, std::int64_t count, PlanShape shape, Algorithm named) {
  return std::make_unique<RingAllReduceSource>(nranks, count, shape, named);
}

}  // namespace cclab::plan
