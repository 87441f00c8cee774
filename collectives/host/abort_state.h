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
  // The one-line TimeoutError of a wait of rank `rank` that ended with `r` (TimedOut or Aborted), at
  // `at` (" at op 3", with its channel where there are several), waiting for `waitingFor` ("data from
  // rank 2"): "<where>: [<late>; ]rank R timed out after T<at> waiting for ...", thrown after `fail`
  // with it (so every other rank stops too; `late()`, the ranks that never started the call, comes
  // first as the likely cause), or "<where>: rank R aborted<at> while waiting for ... (<reason>)".
  [[noreturn]] void throwWaitFailure(WaitResult r, const std::string& where, int rank, const std::string& at,
                                     const std::string& waitingFor, std::chrono::nanoseconds timeout,
                                     const std::function<std::string()>& late,
                                     const std::function<void(const std::string&)>& fail) const;

 private:
  std::atomic<bool> flag_{false};
  mutable WaitWord word_;  // 1 once raised: start delays sleep on it
  mutable std::mutex mutex_;
  std::string reason_;
};

// "rank 7 never arrived" / "ranks 3, 7 never arrived" (at most 8 named), or "" for none.
std::string neverArrived(const std::vector<int>& late);

// Over the ranks' call counters (started(r): the calls rank r has started, wrapping): the latest call
// any rank has started, and neverArrived of the ranks that have not started `call`.
template <class Started>
std::uint32_t latestCall(int nranks, Started started) {
  std::uint32_t latest = 0;
  for (int r = 0; r < nranks; ++r)
    if (const std::uint32_t s = started(r); r == 0 || reached(s, latest)) latest = s;
  return latest;
}
template <class Started>
std::string lateFor(int nranks, std::uint32_t call, Started started) {
  std::vector<int> late;
  for (int r = 0; r < nranks; ++r)
    if (!reached(started(r), call)) late.push_back(r);
  return neverArrived(late);
}
// "30000 ms".
std::string milliseconds(std::chrono::nanoseconds d);

}  // namespace cclab::host
