// Byte sizes on every command line (bench -b/-e/-i/--slice/--iter-bytes, cclab-sim, the trainer):
// one parser, nccl-tests' meaning of the suffixes, overflow-checked.
//
//   accepted   8   1K  1k  1KB  1KiB   (K, M, G, T; any case; 1K = 1024 as nccl-tests' -b 1K)
//              1.5M  0.5K             (a fraction only where it lands on a whole byte)
//   refused    -8  nan  inf  1e3  1.3  0.3K  1X  ""  9E  (beyond 2^62 bytes)
//
// "KB" means KiB here, as nccl-tests' "K" does: there are no 1000-based units. A trailing "B" alone
// ("8B") means bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cclab::conventions {

// Largest size any parser accepts: 2^62 bytes (4 EiB), so that twice a size still fits an int64.
inline constexpr std::int64_t kMaxSizeBytes = std::int64_t{1} << 62;

// Parses `text` as a size in bytes. Throws InvalidArgument "<flag>: '<text>' is not a size (...)" (one
// line) for anything outside the grammar above, a negative or non-finite number, a fraction that is
// not a whole number of bytes, or a size above kMaxSizeBytes.
std::int64_t parseSize(std::string_view text, std::string_view flag);

// "1.5 MiB", "8 B", "256 KiB": the largest binary unit that divides the value, for headers and tables.
std::string formatBytes(std::int64_t bytes);

}  // namespace cclab::conventions
