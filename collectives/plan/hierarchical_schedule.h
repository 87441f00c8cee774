// The hierarchical allreduce's schedule (internal to collectives/plan): which group of ops each lane
// runs in which phase, shared by the generator (allreduce_hierarchical.cc) and its rule
// (op_source_hierarchical.cc) so that both write the same ops.
//
// The data (one channel's part) is cut into B blocks. Stage t is phase t of both lanes:
//   node lane (channel 0):    the node-ring reduce-scatter of block t (t < B), then the node-ring
//                             allgather of block t-2 (2 <= t <= B+1);
//   network lane (channel 1): the network-ring allreduce of block t-1 (1 <= t <= B).
// Deps: the node lane's phase t waits for the network lane's phase t-1 (the allgather of block t-2
// needs its network allreduce) and the network lane's phase t for the node lane's phase t-1 (block
// t-1's reduce-scatter), so block t's node reduce-scatter and block t-2's node allgather overlap
// block t-1's network allreduce.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "collectives/plan/plan.h"

namespace cclab::plan::hier {

enum class Part : std::uint8_t { NodeScatter, NodeGather, Network };

struct Group {
  Part part;
  int block;
  int phase;
};

inline constexpr int kNodeLane = 0, kNetworkLane = 1;

// The node lane's groups in op order.
inline std::vector<Group> nodeGroups(int blocks) {
  std::vector<Group> g;
  for (int t = 0; t <= blocks + 1; ++t) {
    if (t < blocks) g.push_back({Part::NodeScatter, t, t});
    if (t >= 2) g.push_back({Part::NodeGather, t - 2, t});
  }
  return g;
}

// The network lane's groups in op order.
inline std::vector<Group> networkGroups(int blocks) {
  std::vector<Group> g;
  for (int b = 0; b < blocks; ++b) g.push_back({Part::Network, b, b + 1});
  return g;
}

inline std::vector<PhaseDep> deps(int blocks) {
  std::vector<PhaseDep> d;
  for (int t = 1; t <= blocks + 1; ++t) {
    if (t >= 2) d.push_back({kNodeLane, t, kNetworkLane, t - 1});
    if (t <= blocks) d.push_back({kNetworkLane, t, kNodeLane, t - 1});
  }
  return d;
}

}  // namespace cclab::plan::hier
