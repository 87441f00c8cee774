// Which NIC and which GPUs of a node a channel uses (internal to collectives/plan): the layout the
// NIC-aware ring orders (channels.cc ringOrder) and the NCCL-style tree (allreduce_tree.cc) share.
//
// A node has g GPUs and K NICs (1 <= K <= g; K = 0 or K > g: one NIC per GPU); GPU l of a node uses
// NIC floor(l·K/g), so NIC k serves a run of consecutive GPUs, its group. As NCCL's topology search
// does (src/graph/search.cc: a channel's ring or tree enters and leaves a node through one NIC, and
// successive channels take successive NICs), channel c uses NIC k = c mod K, and the j-th channel on
// that NIC (j = floor(c / K)) enters the node at GPU group[j mod m] and leaves it from group[(j+1) mod m]
// (m = the group's size), so the channels of a NIC also spread over its GPUs' PCIe links. A NIC serving
// one GPU cannot be entered and left through distinct GPUs of its own: there the channel leaves from
// the GPU before its entry GPU (local index entry - 1 mod g), which for K = g is the rotation
// "channel c enters at c, leaves at c - 1" (each NIC direction carries one channel in every g).
// With C channels every NIC direction of a node carries floor(C/K) or ceil(C/K) of them, so no NIC
// carries two channels while another is idle.
#pragma once

#include <algorithm>
#include <cstdint>

namespace cclab::plan::nics {

// The NICs a node of g GPUs really has: K, or g where K is 0 or more than g.
inline int effective(int g, int K) { return K <= 0 || K > g ? g : K; }

// The NIC GPU l of a node of g GPUs uses (K effective NICs).
inline int nicOf(int l, int g, int K) { return static_cast<int>(std::int64_t{l} * K / g); }

// The first local GPU of NIC k's group and the group's size.
inline int groupBegin(int k, int g, int K) { return static_cast<int>((std::int64_t{k} * g + K - 1) / K); }
inline int groupSize(int k, int g, int K) { return groupBegin(k + 1, g, K) - groupBegin(k, g, K); }

struct ChannelPorts {
  int nic = 0;    // the NIC channel c enters and leaves the node through
  int entry = 0;  // local GPU the channel enters at (its tree head)
  int exit = 0;   // local GPU it leaves from (= entry only when g = 1)
};

inline ChannelPorts portsOf(int channel, int g, int nicsPerNode) {
  const int K = effective(g, nicsPerNode);
  const int k = channel % K, j = channel / K;
  const int begin = groupBegin(k, g, K), m = groupSize(k, g, K);
  ChannelPorts p{k, begin + j % m, 0};
  p.exit = m >= 2 ? begin + (j + 1) % m : (p.entry + g - 1) % g;
  return p;
}

}  // namespace cclab::plan::nics
