// Strict parsers for command-line values: the whole string must be consumed, else UsageError.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cclab::bench {

// A byte size: a non-negative number (decimals allowed) with an optional K, M or G suffix meaning
// 1024, 1024^2, 1024^3 (nccl-tests' parsesize), optionally followed by "B" or "iB": 8, 1K, 1.5M, 64MiB.
// Fractional bytes round down.
std::int64_t parseSize(std::string_view text);

// A decimal integer in [min, max]; `what` names the value in the error ("iterations").
std::int64_t parseInteger(std::string_view text, std::int64_t min, std::int64_t max, std::string_view what);

// "1.5 MiB", "8 B", "256 KiB": the largest binary unit that divides the value, for headers and tables.
std::string formatBytes(std::int64_t bytes);

}  // namespace cclab::bench
