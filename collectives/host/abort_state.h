// What the host's executors (host_executor.h, ll_executor.h) share about a failed call: the abort
// flag every wait polls, the word start delays sleep on, the first reason, and the straggler's
// bounded start delay; and the one-line texts their timeouts print.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/host/wait.h"

namespace cclab::host {

class AbortState {
 public:
  [[nodiscard]] bool raised() const { return flag_.load(std::memory_order_acquire); }
  // The flag the executor's waits take as their abort condition.
  [[nodiscard]] const std::atomic<bool>& flag() const { return flag_; }
  // Keeps `why` if it is the first reason, raises the flag and wakes the start delays; the owner then
  // wakes its own waiters.
  void raise(const std::string& why);
  [[nodiscard]] std::string reason() const;
  // Sleeps until `until` (spinning the last 200 µs for a precise end); false if raised first.
  bool pauseUntil(Clock::time_point until) const;
  // A straggler's start delay of `delay`: returns when it is over; throws TimeoutError "<who> aborted
  // during its start delay (...)" when raised first, or, when the delay outlasts `timeout`, calls
  // `fail` (the owner's: raise and wake) with "<who> timed out after ... (straggler)" and throws it.
  void delayStart(const std::string& who, std::chrono::nanoseconds delay, std::chrono::nanoseconds timeout,
                  const std::function<void(const std::string&)>& fail) const;

 private:
  std::atomic<bool> flag_{false};
  mutable WaitWord word_;  // 1 once raised: start delays sleep on it
  mutable std::mutex mutex_;
  std::string reason_;
};

// "rank 7 never arrived" / "ranks 3, 7 never arrived" (at most 8 named), or "" for none.
std::string neverArrived(const std::vector<int>& late);
// "30000 ms".
std::string milliseconds(std::chrono::nanoseconds d);

}  // namespace cclab::host
