// Strict integer parser for command-line values (sizes are parsed by collectives/conventions/size.h).
#pragma once

#include <cstdint>
#include <string_view>

namespace cclab::bench {

// A decimal integer in [min, max]; `what` names the value in the error ("iterations"). Throws UsageError.
std::int64_t parseInteger(std::string_view text, std::int64_t min, std::int64_t max, std::string_view what);

}  // namespace cclab::bench
