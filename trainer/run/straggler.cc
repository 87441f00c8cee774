// ComputeThrottle: the straggler's slower compute, as sleeps proportional to the compute just measured.
#include "trainer/run/straggler.h"

#include <thread>


namespace cclab::trainer {

std::int64_t ComputeThrottle::pace(const RunClock& clock, std::int64_t sinceNs) {
  if (factor_ == 1.0) return 0;
  const std::int64_t start = clock.nowNs();
  const auto delay = static_cast<std::int64_t>(static_cast<double>(start - sinceNs) * (factor_ - 1.0));
  if (delay > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(delay));
  return clock.nowNs() - start;
}

}  // namespace cclab::trainer
