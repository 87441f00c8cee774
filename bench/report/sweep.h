// The sizes a run sweeps, with nccl-tests' flags: -b min, -e max, -f factor (multiplicative when > 1),
// -i increment (additive, used when the factor is 1).
#pragma once

#include <cstdint>
#include <vector>

namespace cclab::bench {

// nccl-tests' defaults (src/common.cu: minBytes = maxBytes = 32 MiB, stepBytes = 1 MiB, stepFactor = 1).
inline constexpr std::int64_t kDefaultSweepBytes = std::int64_t{32} << 20;
inline constexpr std::int64_t kDefaultStepBytes = std::int64_t{1} << 20;
// More sizes than anyone means to run ("-b 1 -e 1G -i 1"): refused rather than run for days.
inline constexpr std::size_t kMaxSweepSizes = 10000;

struct SweepOptions {
  std::int64_t minBytes = kDefaultSweepBytes;
  std::int64_t maxBytes = kDefaultSweepBytes;
  std::int64_t stepBytes = kDefaultStepBytes;
  std::int64_t stepFactor = 1;
};

// Throws UsageError: min > max, factor < 1, a zero start with a factor, a zero increment, too many sizes.
void validate(const SweepOptions& s);

// The sizes in bytes, min first (before rounding to whole elements; see CollectiveShape).
std::vector<std::int64_t> sweepSizes(const SweepOptions& s);

}  // namespace cclab::bench
