// Channels: a plan of C lanes, each the one-channel algorithm on its own part of the data.
//
// makePlan cuts count into C parts (chunkOf) and asks the one-channel generator for part c (a
// generator may write several lanes, as the hierarchical allreduce's node and network lanes: part c's
// lanes become consecutive channels, with their deps moved along). The
// generator writes its plan over "positions" 0..p-1; channel c's rank order (ringOrder for rings,
// the identity otherwise) maps position v to rank order[v]. Ranges move to where part c lies:
//  - a whole-vector buffer (allreduce, broadcast, reduce; reduce-scatter's output, allgather's input):
//    offset + part.offset;
//  - a buffer of p blocks of count elements (reduce-scatter's input, allgather's output): block b of
//    the channel's plan (b = offset / part.count) is block order[b] of the real one, at part.offset
//    inside it, so rank order[v] still ends with its own block;
//  - scratch: channel c's scratch follows channel c-1's.
// The result is checked like any plan (validate.h); tests/plan runs every generator x {1, 2, 4} channels.
#include <algorithm>
#include <numeric>
#include <string>

#include "collectives/core/errors.h"
#include "collectives/plan/channels.h"
#include "collectives/plan/nic_layout.h"

namespace cclab::plan {

std::vector<int> ringOrder(int nranks, int ranksPerNode, int channel, int nicsPerNode) {
  std::vector<int> order(static_cast<std::size_t>(std::max(nranks, 0)));
  std::iota(order.begin(), order.end(), 0);
  const int g = ranksPerNode;
  if (g <= 1 || g >= nranks || nranks % g != 0) return order;
  // Every node the same: enter at the channel's entry GPU, visit the others upwards from it, leave
  // from its exit GPU (nic_layout.h), so the ring crosses between nodes on the channel's NIC.
  const nics::ChannelPorts ports = nics::portsOf(channel, g, nicsPerNode);
  std::vector<int> local;
  local.reserve(static_cast<std::size_t>(g));
  for (int j = 0; j < g; ++j) {
    const int l = (ports.entry + j) % g;
    if (l != ports.exit) local.push_back(l);
  }
  local.push_back(ports.exit);
  for (int n = 0; n < nranks / g; ++n)
    for (int j = 0; j < g; ++j) order[static_cast<std::size_t>(n * g + j)] = n * g + local[static_cast<std::size_t>(j)];
  return order;
}

std::vector<std::span<const Op>> channelOps(const Plan& plan, int rank) {
  std::vector<std::span<const Op>> out(static_cast<std::size_t>(std::max(plan.nchannels, 1)));
  const auto& ops = plan.ranks[static_cast<std::size_t>(rank)];
  std::size_t i = 0;
  for (int c = 0; c < plan.nchannels; ++c) {
    const std::size_t begin = i;
    while (i < ops.size() && ops[i].channel == c) ++i;
    out[static_cast<std::size_t>(c)] = std::span<const Op>(ops).subspan(begin, i - begin);
  }
  return out;
}

SequentialOps::SequentialOps(const Plan& plan, int rank) {
  const std::vector<Op>& listed = plan.ranks[static_cast<std::size_t>(rank)];
  if (plan.deps.empty()) {
    listed_ = &listed;
    return;
  }
  sorted_ = listed;
  std::stable_sort(sorted_.begin(), sorted_.end(), [](const Op& a, const Op& b) { return a.phase < b.phase; });
}

Plan splitIntoChannels(Collective c, Algorithm a, int nranks, std::int64_t count, int root, int channels,
                       const ChannelGenerator& generate, const ChannelOrder& orderOf) {
  if (channels < 1 || channels > kMaxChannels)
    throw InvalidArgument("makePlan: channels must be 1.." + std::to_string(kMaxChannels) + ", got " +
                          std::to_string(channels));
  Plan plan;
  plan.collective = c;
  plan.algorithm = a;
  plan.nranks = nranks;
  plan.count = count;
  plan.root = root;
  plan.nchannels = 0;
  plan.nphases = 1;
  plan.ranks.resize(static_cast<std::size_t>(nranks));
  const bool blockedInput = c == Collective::ReduceScatter, blockedOutput = c == Collective::AllGather;
  for (int ch = 0; ch < channels; ++ch) {
    const Chunk part = chunkOf(count, channels, ch);
    const std::vector<int> order = orderOf ? orderOf(ch) : ringOrder(nranks, 0, 0);
    std::vector<int> position(order.size());
    for (std::size_t v = 0; v < order.size(); ++v) position[static_cast<std::size_t>(order[v])] = static_cast<int>(v);
    const Plan sub = generate(ch, part.count, position[static_cast<std::size_t>(root)]);
    const int lane0 = plan.nchannels;  // the part's lanes (its plan's channels) become channels lane0, ...
    plan.nchannels += sub.nchannels;
    if (plan.nchannels > kMaxChannels)
      throw InvalidArgument("makePlan: " + std::to_string(channels) + " channels of " + std::to_string(sub.nchannels) +
                            " lanes each are more than " + std::to_string(kMaxChannels) + " channels");
    for (PhaseDep d : sub.deps) {
      d.channel += lane0;
      d.afterChannel += lane0;
      plan.deps.push_back(d);
    }
    const std::int64_t scratchBase = plan.scratchCount;
    auto move = [&](Range r) {
      const bool blocked = (r.buf == Buf::Input && blockedInput) || (r.buf == Buf::Output && blockedOutput);
      if (r.buf == Buf::Scratch)
        r.offset += scratchBase;
      else if (blocked && part.count > 0)
        r.offset = std::int64_t{order[static_cast<std::size_t>(r.offset / part.count)]} * count + part.offset +
                   r.offset % part.count;
      else
        r.offset += part.offset;
      return r;
    };
    for (int v = 0; v < nranks; ++v) {
      auto& ops = plan.ranks[static_cast<std::size_t>(order[static_cast<std::size_t>(v)])];
      for (Op op : sub.ranks[static_cast<std::size_t>(v)]) {
        op.channel = static_cast<std::uint8_t>(lane0 + op.channel);
        if (op.peer >= 0) op.peer = order[static_cast<std::size_t>(op.peer)];
        if (op.reads()) op.src = move(op.src);
        if (op.writes()) op.dst = move(op.dst);
        ops.push_back(op);
      }
    }
    plan.scratchCount += sub.scratchCount;
    plan.nphases = std::max(plan.nphases, sub.nphases);
    plan.algorithm = sub.algorithm;
  }
  return plan;
}

}  // namespace cclab::plan
