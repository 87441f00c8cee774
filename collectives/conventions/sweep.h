// The sizes a run sweeps, nccl-tests' -b min, -e max, -f factor, -i increment, for bench and cclab-sim.
//
// The rule (nccl-tests src/common.cu): start at -b; while below -e, multiply by -f when it is > 1,
// else add -i. The factor is a whole number as in nccl-tests (which reads it with strtol): "-f 1.5"
// is refused instead of silently meaning 1. "-b 0" with a factor is refused (0 times anything stays
// 0: nccl-tests repeats size 0 forever); with an increment it starts at 0. The number of sizes is
// computed (not generated) first and must not exceed kMaxSweepSizes: "-b 0 -e 1G -i 1" is refused
// at once. Sizes are always <= -e; no step overflows an int64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace cclab::conventions {

// nccl-tests' defaults (src/common.cu: minBytes = maxBytes = 32 MiB, stepBytes = 1 MiB, stepFactor = 1).
inline constexpr std::int64_t kDefaultSweepBytes = std::int64_t{32} << 20;
inline constexpr std::int64_t kDefaultStepBytes = std::int64_t{1} << 20;
// More sizes than anyone means to run: refused rather than run for days (or allocated for GBs).
inline constexpr std::size_t kMaxSweepSizes = 10000;
// The largest factor accepted: beyond it every sweep has at most two sizes anyway.
inline constexpr std::int64_t kMaxStepFactor = std::int64_t{1} << 32;

struct SweepOptions {
  std::int64_t minBytes = kDefaultSweepBytes;
  std::int64_t maxBytes = kDefaultSweepBytes;
  std::int64_t stepBytes = kDefaultStepBytes;
  std::int64_t stepFactor = 1;
};

// "-f": a whole number in [1, kMaxStepFactor]. Throws InvalidArgument naming `flag` ("2.5", "nan", "0").
std::int64_t parseStepFactor(std::string_view text, std::string_view flag);

// How many sizes the sweep has, without building it. Throws InvalidArgument (naming -b/-e/-f/-i):
// negative sizes, min > max, factor < 1, a factor from 0, a zero increment, more than kMaxSweepSizes.
std::size_t sweepCount(const SweepOptions& s);

// The sizes in bytes, min first; validated by sweepCount first.
std::vector<std::int64_t> sweepSizes(const SweepOptions& s);

}  // namespace cclab::conventions
