// The protocol of one collective call (NCCL's LL, LL128 and Simple; their costs: topology.h) and how it is
// chosen. Every message of a call takes the same protocol, as in NCCL, whose tuner predicts the time
// of each algorithm x protocol for the whole call and runs the fastest. Here too: `auto` predicts the
// call under each protocol (replay: the schedule replayed once per protocol; analytic: the closed form
// with each protocol's α and β) and takes the faster, ties to Simple. A per-message choice (each
// message by what delivers it sooner on an idle route) is blind to
// messages sharing a link: 8 channels' LL messages on one NIC hold it twice as long as Simple's.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "sim/topology.h"
#include "sim/units.h"

namespace cclab::sim {

// What a call asks for (`--protocol`): the fastest allowed, or one forced.
enum class ProtocolChoice : std::uint8_t { Auto, LL, LL128, Simple };
std::string_view name(ProtocolChoice c);  // auto, ll, ll128, simple
// "auto", "ll", "ll128" or "simple"; InvalidArgument naming --protocol otherwise.
ProtocolChoice parseProtocolChoice(std::string_view text);

// What a call ran with: LL, LL128, Simple, or None where the topology models no protocol (ll_protocol
// false: every message one traversal at full bandwidth, the textbook model).
enum class Protocol : std::uint8_t { None, LL, LL128, Simple };
std::string_view name(Protocol p);  // none, ll, ll128, simple

// A set of protocols (bit 1 << Protocol).
using ProtocolSet = std::uint8_t;
inline constexpr ProtocolSet bit(Protocol p) { return static_cast<ProtocolSet>(1u << static_cast<unsigned>(p)); }
inline constexpr ProtocolSet kAllProtocols = bit(Protocol::LL) | bit(Protocol::LL128) | bit(Protocol::Simple);
// What NCCL runs each of its algorithms with (NCCL src/graph/tuning.cc, ncclTopoTuneModel: ring and tree
// take LL, LL128 and Simple; NVLS, NVLS-tree, CollNet and PAT Simple only). Our plans that NCCL has
// (ring, tree, dbtree, chain, the hier rings) take all three, and so do those NCCL has not (rhd, rd,
// oneshot, twoshot: their messages are point to point like a ring's); NVLS (analytic_nvls.cc) Simple.
inline constexpr ProtocolSet kNvlsProtocols = bit(Protocol::Simple);

// The protocols a choice tries on a topology for an algorithm that allows `allowed`, Simple first,
// then LL128, then LL (a tie goes to the earlier): {None} without ll_protocol, where a forced one is
// refused; the topology's (Simple, LL, and LL128 where ll128_protocol) within `allowed` for auto; the
// forced one otherwise. A forced protocol the topology or the algorithm does not run is refused
// (InvalidArgument naming --protocol and the reason).
std::vector<Protocol> protocolCandidates(const TopologySpec& spec, ProtocolChoice choice, ProtocolSet allowed = kAllProtocols);

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
