// Runaways refused before they start: a run counts the bytes it will allocate and compares them with
// what the machine has, instead of being OOM-killed minutes later. The host side is here (MemAvailable
// of /proc/meminfo); a device backend passes its own free memory to requireMemory the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace cclab::conventions {

// MemAvailable of /proc/meminfo in bytes, or empty where it cannot be read (then nothing is refused).
std::optional<std::int64_t> hostMemoryAvailable();

// Parses a /proc/meminfo text; empty when it has no "MemAvailable: N kB" line.
std::optional<std::int64_t> memAvailableOf(std::string_view meminfo);

// count * bytes + extra, saturating at INT64_MAX instead of wrapping (all arguments >= 0).
std::int64_t saturatingBytes(std::int64_t count, std::int64_t bytes, std::int64_t extra = 0);

// Throws InvalidArgument "<what> needs N bytes (X GiB) of <where>, only M bytes (Y GiB) are available"
// when needed > available.
void requireMemory(std::int64_t needed, std::int64_t available, std::string_view what, std::string_view where);

}  // namespace cclab::conventions
