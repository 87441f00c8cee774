// How many times each size runs: nccl-tests' -n (timed iterations), -w (warm-up), -m (calls per timed
// iteration), -c (check), -a (average mode), plus --iter-bytes: a cap on bytes per size that gives
// big sizes fewer iterations (not in nccl-tests; off by default).
#pragma once

#include <cstdint>

#include "bench/report/average_mode.h"

namespace cclab::bench {

// nccl-tests' defaults (src/common.cu: iters = 20, warmup_iters = 5, agg_iters = 1, datacheck = 1).
inline constexpr int kDefaultIters = 20;
inline constexpr int kDefaultWarmup = 5;
// With --iter-bytes, no size runs fewer timed iterations than this (a mean of fewer is noise).
inline constexpr int kMinScaledIters = 3;

struct IterationOptions {
  int iters = kDefaultIters;
  int warmup = kDefaultWarmup;
  int aggIters = 1;
  int check = 1;  // 0: no check (#wrong prints N/A); >= 1: check once per measurement
  AverageMode average = AverageMode::Mean;
  std::int64_t iterBytes = 0;  // 0: every size runs `iters`

  // Timed iterations at `sizeBytes`: `iters`, or with iterBytes, min(iters, max(kMinScaledIters, iterBytes/size)).
  [[nodiscard]] int itersAt(std::int64_t sizeBytes) const;
  // Warm-up iterations at `sizeBytes`: `warmup`, scaled down with iterBytes (at least 1 when warmup > 0).
  [[nodiscard]] int warmupAt(std::int64_t sizeBytes) const;
};

}  // namespace cclab::bench
