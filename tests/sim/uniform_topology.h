// Test helper: a topology of one link class ("link") with the given latency and bandwidth, the shape
// the closed forms assume (fully connected, or one switch).
#pragma once

#include "sim/topology.h"

namespace cclab::sim::testing {

inline TopologySpec uniformTopology(TopologyKind kind, int ranks, Micros latency, GBps bandwidth) {
  TopologySpec s;
  s.name = std::string(name(kind));
  s.kind = kind;
  s.ranks = ranks;
  s.classes["link"] = {latency, bandwidth};
  return s;
}

}  // namespace cclab::sim::testing
