// The trainer's clock: steady_clock nanoseconds since the run's origin.
#pragma once

#include <chrono>
#include <cstdint>

namespace cclab::trainer {

using Clock = std::chrono::steady_clock;

class RunClock {
 public:
  RunClock() : origin_(Clock::now()) {}
  [[nodiscard]] std::int64_t nowNs() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin_).count();
  }

 private:
  Clock::time_point origin_;
};

inline constexpr double kNsPerUs = 1e3;
inline constexpr double kNsPerS = 1e9;

}  // namespace cclab::trainer
