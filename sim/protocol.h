// The protocol of one collective call (NCCL's LL and Simple; their costs: topology.h) and how it is
// chosen. Every message of a call takes the same protocol, as in NCCL, whose tuner predicts the time
// of each algorithm x protocol for the whole call and runs the fastest. Here too: `auto` predicts the
// call under each protocol (replay: the schedule replayed once per protocol; analytic: the closed form
// with each protocol's α and β) and takes the faster, ties to Simple. A per-message choice (each
// message by what delivers it sooner on an idle route, the rule before 2026-12-03) is blind to
// messages sharing a link: 8 channels' LL messages on one NIC hold it twice as long as Simple's.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "sim/topology.h"
#include "sim/units.h"

namespace cclab::sim {

// What a call asks for (`--protocol`): the faster of the two, or one forced.
enum class ProtocolChoice : std::uint8_t { Auto, LL, Simple };
std::string_view name(ProtocolChoice c);  // auto, ll, simple
// "auto", "ll" or "simple"; InvalidArgument naming --protocol otherwise.
ProtocolChoice parseProtocolChoice(std::string_view text);

// What a call ran with: LL, Simple, or None where the topology models no protocol (ll_protocol false:
// every message one traversal at full bandwidth, the textbook model).
enum class Protocol : std::uint8_t { None, LL, Simple };
std::string_view name(Protocol p);  // none, ll, simple

// The protocols a choice tries on a topology, Simple first (a tie goes to it): {None} without
// ll_protocol, where a forced LL or Simple is refused (InvalidArgument naming --protocol and the
// topology); {Simple, LL} for auto; the forced one otherwise.
std::vector<Protocol> protocolCandidates(const TopologySpec& spec, ProtocolChoice choice);

// A protocol's cost on a message (topology.h): every resource is held `stretch` times as long as the
// bytes need at its bandwidth, and the message arrives after `traversals` times its route's latency.
struct ProtocolCost {
  double stretch = 1;
  double traversals = 1;
};
ProtocolCost costOf(Protocol p);

// One prediction of a call: its time and the protocol all its messages took.
struct Prediction {
  Micros time = 0;
  Protocol protocol = Protocol::None;
};

// The fastest of `candidates` by `timeOf(protocol)`, ties to the earlier.
template <class TimeOf>
Prediction fastestProtocol(const std::vector<Protocol>& candidates, TimeOf&& timeOf) {
  Prediction best{std::numeric_limits<Micros>::infinity(), candidates.front()};
  for (Protocol p : candidates) {
    const Micros t = timeOf(p);
    if (t < best.time) best = {t, p};
  }
  return best;
}

}  // namespace cclab::sim
