#include "bench/report/iteration.h"

#include <algorithm>

namespace cclab::bench {

int IterationOptions::itersAt(std::int64_t sizeBytes) const {
  if (iterBytes <= 0) return iters;
  const std::int64_t fit = iterBytes / std::max<std::int64_t>(sizeBytes, 1);
  return static_cast<int>(std::min<std::int64_t>(iters, std::max<std::int64_t>(kMinScaledIters, fit)));
}

int IterationOptions::warmupAt(std::int64_t sizeBytes) const {
  if (iterBytes <= 0 || warmup == 0) return warmup;
  constexpr int kWarmupPerTimed = 4;  // nccl-tests' ratio: 5 warm-up per 20 timed
  return std::min(warmup, std::max(1, itersAt(sizeBytes) / kWarmupPerTimed));
}

}  // namespace cclab::bench
