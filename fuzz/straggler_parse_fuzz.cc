// libFuzzer target: the straggler flag parser (collectives/core/straggler.h), under each tool's
// meaning of a bare RANK:NUMBER. Any text must either parse or throw; what parses must print
// (format) and parse back to the same Straggler.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "collectives/core/straggler.h"

namespace {

bool same(const cclab::Straggler& a, const cclab::Straggler& b) {
  return a.rank == b.rank && a.startDelay == b.startDelay && a.computeFactor == b.computeFactor &&
         a.linkFactor == b.linkFactor;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto bare : {cclab::BareNumber::DelayMicroseconds, cclab::BareNumber::ComputeFactor,
                          cclab::BareNumber::ComputeAndLinkFactor}) {
    cclab::Straggler s;
    try {
      s = cclab::parseStraggler(text, bare);
    } catch (const std::exception&) {
      continue;  // refused with a message: the contract
    }
    const std::string printed = cclab::format(s);
    cclab::Straggler again;
    try {
      again = cclab::parseStraggler(printed, bare);
    } catch (const std::exception&) {
      std::abort();  // format() wrote something parseStraggler refuses
    }
    if (s.active() && !same(s, again)) std::abort();
  }
  return 0;
}
