// The trainer's clock: steady_clock nanoseconds since the run's origin; and the thread's CPU time.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>

namespace cclab::trainer {

using Clock = std::chrono::steady_clock;

class RunClock {
 public:
  RunClock() : origin_(Clock::now()) {}
  explicit RunClock(Clock::time_point origin) : origin_(origin) {}  // an origin agreed with other processes
  [[nodiscard]] std::int64_t nowNs() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin_).count();
  }

 private:
  Clock::time_point origin_;
};

// CPU time the calling thread has used, ns (CLOCK_THREAD_CPUTIME_ID): unlike the run clock it does not
// advance while the thread is descheduled, so it measures work, not this machine's time-slicing.
inline std::int64_t threadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline constexpr double kNsPerUs = 1e3;
inline constexpr double kNsPerS = 1e9;

}  // namespace cclab::trainer
