// The protocol choice of a collective call (protocol.h).
#include "sim/protocol.h"

#include <string>

#include "collectives/core/errors.h"

namespace cclab::sim {

std::string_view name(ProtocolChoice c) {
  switch (c) {
    case ProtocolChoice::LL: return "ll";
    case ProtocolChoice::Simple: return "simple";
    default: return "auto";
  }
}

ProtocolChoice parseProtocolChoice(std::string_view text) {
  for (ProtocolChoice c : {ProtocolChoice::Auto, ProtocolChoice::LL, ProtocolChoice::Simple})
    if (text == name(c)) return c;
  throw InvalidArgument("--protocol must be ll, simple or auto (got '" + std::string(text) + "')");
}

std::string_view name(Protocol p) {
  switch (p) {
    case Protocol::LL: return "ll";
    case Protocol::Simple: return "simple";
    default: return "none";
  }
}

std::vector<Protocol> protocolCandidates(const TopologySpec& spec, ProtocolChoice choice) {
  if (!spec.llProtocol) {
    if (choice != ProtocolChoice::Auto)
      throw InvalidArgument("--protocol " + std::string(name(choice)) + ": topology '" + spec.name +
                            "' models no protocols (its ll_protocol is false); use --protocol auto");
    return {Protocol::None};
  }
  switch (choice) {
    case ProtocolChoice::LL: return {Protocol::LL};
    case ProtocolChoice::Simple: return {Protocol::Simple};
    default: return {Protocol::Simple, Protocol::LL};
  }
}

ProtocolCost costOf(Protocol p) {
  switch (p) {
    case Protocol::LL: return {1 / kLLEfficiency, 1};
    case Protocol::Simple: return {1, kSimpleLatencyTraversals};
    default: return {1, 1};
  }
}

}  // namespace cclab::sim
