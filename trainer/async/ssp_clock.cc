#include "trainer/async/ssp_clock.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "collectives/core/errors.h"

namespace cclab::trainer {

SspClock::SspClock(int workers, int bound)
    : bound_(bound), clocks_(static_cast<std::size_t>(workers), 0), finished_(static_cast<std::size_t>(workers), false) {}

std::int64_t SspClock::slowest() const {
  std::int64_t m = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i = 0; i < clocks_.size(); ++i)
    if (!finished_[i]) m = std::min(m, clocks_[i]);
  return m;
}

void SspClock::finish(int worker) {
  {
    std::lock_guard lock(mutex_);
    finished_[static_cast<std::size_t>(worker)] = true;
  }
  changed_.notify_all();
}

void SspClock::reset() {
  std::lock_guard lock(mutex_);
  std::fill(clocks_.begin(), clocks_.end(), 0);
  std::fill(finished_.begin(), finished_.end(), false);
}

std::int64_t SspClock::waitTurn(int worker) {
  if (bound_ < 0) return 0;
  const auto t = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] {
    const std::int64_t gap = clocks_[static_cast<std::size_t>(worker)] - slowest();
    return aborted_ || gap < bound_ || gap <= 0;  // after this step's push the gap is at most bound (1 if bound is 0)
  });
  if (aborted_) throw Error("SSP wait aborted: another worker failed");
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t).count();
}

void SspClock::advance(int worker) {
  if (bound_ < 0) return;
  {
    std::lock_guard lock(mutex_);
    ++clocks_[static_cast<std::size_t>(worker)];
    maxGap_ = std::max(maxGap_, clocks_[static_cast<std::size_t>(worker)] - slowest());
  }
  changed_.notify_all();
}

std::int64_t SspClock::maxGap() {
  std::lock_guard lock(mutex_);
  return maxGap_;
}

void SspClock::abort() {
  {
    std::lock_guard lock(mutex_);
    aborted_ = true;
  }
  changed_.notify_all();
}

}  // namespace cclab::trainer
