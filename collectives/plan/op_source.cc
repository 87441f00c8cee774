// OpSource defaults, the plan-backed source and the factory (op_source.h).
#include "collectives/plan/op_source.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "collectives/core/errors.h"
#include "collectives/plan/channels.h"
#include "collectives/plan/slice_walk.h"

namespace cclab::plan {

PlanInfo infoOf(const Plan& plan) {
  return {plan.collective, plan.algorithm, plan.nranks,    plan.count,       plan.root,
          plan.nphases,    plan.nchannels, plan.ranksPerNode, plan.scratchCount, plan.deps};
}

std::int64_t OpSource::channelBegin(int rank, int channel) const {
  std::int64_t lo = 0, hi = size(rank);  // ops are sorted by channel: the first with op.channel >= channel
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (op(rank, mid).channel < channel)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

std::vector<std::pair<std::int64_t, std::int64_t>> OpSource::channelRuns(int rank) const {
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;
  for (int c = 0; c < info_.nchannels; ++c) {
    const std::int64_t begin = channelBegin(rank, c), end = c + 1 < info_.nchannels ? channelBegin(rank, c + 1) : size(rank);
    if (begin < end) runs.emplace_back(begin, end);
  }
  return runs;
}

std::vector<std::pair<std::int64_t, std::int64_t>> PlanOpSource::channelRuns(int rank) const {
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;
  const auto& ops = plan_->ranks[static_cast<std::size_t>(rank)];
  for (std::size_t begin = 0; begin < ops.size();) {
    std::size_t end = begin;
    while (end < ops.size() && ops[end].channel == ops[begin].channel) ++end;
    runs.emplace_back(static_cast<std::int64_t>(begin), static_cast<std::int64_t>(end));
    begin = end;
  }
  return runs;
}

std::int64_t PlanOpSource::maxOpCount() const {
  std::int64_t m = 0;
  for (const auto& ops : plan_->ranks)
    for (const auto& op : ops) m = std::max(m, op.count());
  return m;
}

std::int64_t OpSource::maxOpCount() const {
  std::int64_t m = 0;
  for (int r = 0; r < nranks(); ++r)
    for (std::int64_t i = 0, n = size(r); i < n; ++i) m = std::max(m, op(r, i).count());
  return m;
}

std::int64_t OpSource::opSlices(std::int64_t sliceElems, std::int64_t limit) const {
  std::int64_t total = 0;
  for (int r = 0; r < nranks(); ++r)
    for (std::int64_t i = 0, n = size(r); i < n; ++i) {
      total += sliceCount(op(r, i).count(), sliceElems);
      if (total > limit) return total;
    }
  return total;
}

std::vector<PeerLink> OpSource::links(int rank) const {
  std::vector<PeerLink> out;  // a rank has few point-to-point peers: a linear scan beats a sort
  std::uint64_t gathers = 0;  // channels (< kMaxChannels = 64) with a ReduceAll
  for (std::int64_t i = 0, n = size(rank); i < n; ++i) {
    const Op o = op(rank, i);
    if (o.count() <= 0 || o.kind == OpKind::Copy) continue;
    if (o.kind == OpKind::ReduceAll) {
      gathers |= std::uint64_t{1} << o.channel;
      continue;
    }
    const PeerLink l{o.peer, o.kind == OpKind::Send, o.channel};
    if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
  }
  if (gathers == 0) return out;
  for (int ch = 0; ch < kMaxChannels; ++ch)
    if (gathers >> ch & 1)
      for (int q = 0; q < nranks(); ++q)
        if (q != rank) out.push_back({q, false, ch});
  auto key = [](const PeerLink& l) { return std::tuple(l.channel, l.out, l.peer); };
  std::sort(out.begin(), out.end(), [&](const PeerLink& a, const PeerLink& b) { return key(a) < key(b); });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::int64_t OpSource::totalOps() const {
  std::int64_t n = 0;
  for (int r = 0; r < nranks(); ++r) n += size(r);
  return n;
}

std::unique_ptr<OpSource> makeOpSource(Collective c, Algorithm a, int nranks, std::int64_t count, int root, PlanShape shape) {
  if (c == Collective::AllReduce && (a == Algorithm::Ring || a == Algorithm::Hierarchical)) {
    checkPlanArguments(c, a, nranks, count, root, shape);
    if (shape.channels < 1 || shape.channels > kMaxChannels)
      throw InvalidArgument("makePlan: channels must be 1.." + std::to_string(kMaxChannels) + ", got " +
                            std::to_string(shape.channels));
    if (a == Algorithm::Ring) return ringAllReduceSource(nranks, count, shape, Algorithm::Ring);
    return hierarchicalAllReduceSource(nranks, count, shape);
  }
  return std::make_unique<PlanOpSource>(makePlan(c, a, nranks, count, root, shape));
}

}  // namespace cclab::plan
