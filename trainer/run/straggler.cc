// ComputeThrottle: the straggler's slower compute, as exact delays proportional to the compute just
// measured (sleep most, spin the tail, carry overshoot as debt).
#include "trainer/run/straggler.h"

#include <chrono>
#include <thread>

namespace cclab::trainer {

std::int64_t ComputeThrottle::pace(const RunClock& clock, std::int64_t sinceNs) {
  if (factor_ == 1.0) return 0;
  const std::int64_t start = clock.nowNs();
  const std::int64_t measured = start - sinceNs;
  if (measured > 0) measuredNs_ += measured;
  debtNs_ += static_cast<double>(measured > 0 ? measured : 0) * (factor_ - 1.0);
  if (debtNs_ <= 0.0) return 0;
  const std::int64_t cpu0 = threadCpuNs();
  const std::int64_t deadline = start + static_cast<std::int64_t>(debtNs_);
  const std::int64_t sleepNs = deadline - start - kSpinTailNs;
  if (sleepNs > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(sleepNs));
  std::int64_t now = clock.nowNs();
  while (now < deadline) now = clock.nowNs();
  const std::int64_t delayed = now - start;
  injectedNs_ += delayed;
  spinCpuNs_ += threadCpuNs() - cpu0;
  debtNs_ -= static_cast<double>(delayed);
  return delayed;
}

double ComputeThrottle::realisedFactor() const {
  if (measuredNs_ <= 0) return 1.0;
  return static_cast<double>(measuredNs_ + injectedNs_) / static_cast<double>(measuredNs_);
}

}  // namespace cclab::trainer
