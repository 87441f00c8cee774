// The protocol choice of a collective call (protocol.h).
#include "sim/protocol.h"

#include <string>

#include "collectives/core/errors.h"

namespace cclab::sim {

std::string_view name(ProtocolChoice c) {
  switch (c) {
    case ProtocolChoice::LL: return "ll";
    case ProtocolChoice::LL128: return "ll128";
    case ProtocolChoice::Simple: return "simple";
    default: return "auto";
  }
}

ProtocolChoice parseProtocolChoice(std::string_view text) {
  for (ProtocolChoice c : {ProtocolChoice::Auto, ProtocolChoice::LL, ProtocolChoice::LL128, ProtocolChoice::Simple})
    if (text == name(c)) return c;
  throw InvalidArgument("--protocol must be ll, ll128, simple or auto (got '" + std::string(text) + "')");
}

std::string_view name(Protocol p) {
  switch (p) {
    case Protocol::LL: return "ll";
    case Protocol::LL128: return "ll128";
    case Protocol::Simple: return "simple";
    default: return "none";
  }
}

std::vector<Protocol> protocolCandidates(const TopologySpec& spec, ProtocolChoice choice, ProtocolSet allowed) {
  if (!spec.llProtocol) {
    if (choice != ProtocolChoice::Auto)
      throw InvalidArgument("--protocol " + std::string(name(choice)) + ": topology '" + spec.name +
                            "' models no protocols (its ll_protocol is false); use --protocol auto");
    return {Protocol::None};
  }
  ProtocolSet topo = bit(Protocol::Simple) | bit(Protocol::LL) | (spec.ll128Protocol ? bit(Protocol::LL128) : 0);
  if (choice != ProtocolChoice::Auto) {
    const Protocol p = choice == ProtocolChoice::LL ? Protocol::LL : choice == ProtocolChoice::LL128 ? Protocol::LL128 : Protocol::Simple;
    if (!(topo & bit(p)))
      throw InvalidArgument("--protocol " + std::string(name(choice)) + ": topology '" + spec.name +
                            "' does not run it (LL128 needs ll128_protocol: NVLink and compute capability 7.0 or more)");
    if (!(allowed & bit(p)))
      throw InvalidArgument("--protocol " + std::string(name(choice)) + ": NCCL does not run this algorithm with it");
    return {p};
  }
  std::vector<Protocol> out;
  for (Protocol p : {Protocol::Simple, Protocol::LL128, Protocol::LL})
    if (topo & allowed & bit(p)) out.push_back(p);
  if (out.empty()) throw InvalidArgument("topology '" + spec.name + "' runs none of the protocols this algorithm takes");
  return out;
}

ProtocolCost costOf(Protocol p) {
  switch (p) {
    case Protocol::LL: return {1 / kLLEfficiency, 1};
    case Protocol::LL128: return {1 / kLL128Efficiency, kLL128LatencyTraversals};
    case Protocol::Simple: return {1, kSimpleLatencyTraversals};
    default: return {1, 1};
  }
}

}  // namespace cclab::sim
