// What the host's executors (host_executor.h, ll_executor.h) share about their calls: the abort flag
// every wait polls, the word start delays sleep on, the first reason, and the straggler's bounded start
// delay (AbortState); the one-line texts their timeouts print; and their base, ExecutorBase: each
// rank's call count, the arrival log, and the checks that begin a rank's call.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/call/vocabulary.h"
#include "collectives/host/arrival_log.h"
#include "collectives/host/wait.h"
#include "collectives/plan/plan.h"

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

// The base of the host's executors: the rank count, the abort state, each rank's call count (the calls
// it has started, after its start delay) and the ArrivalLog of the calls. Errors are headed "host" for
// the slot executor, "host ll" for the LL executor (its plans named "host allreduce/ring (ll)").
class ExecutorBase {
 public:
  ExecutorBase(const ExecutorBase&) = delete;
  ExecutorBase& operator=(const ExecutorBase&) = delete;
  virtual ~ExecutorBase() = default;

  [[nodiscard]] int nranks() const { return nranks_; }
  // After a timeout the connections are out of step: every later run() throws.
  [[nodiscard]] bool broken() const { return abort_.raised(); }
  // Marks the executor broken with `why` and ends every wait and start delay now (they throw).
  void abort(const std::string& why) { fail(why); }

 protected:
  ExecutorBase(int nranks, bool ll);  // refuses nranks < 1
  // Refuses a rank out of range or a plan for another number of ranks.
  void check(int rank, const plan::Plan& plan) const;
  void checkUsable() const;  // refuses a call after a failure
  // The start of a rank's call: checkUsable, the straggler's start delay, then nextCall.
  std::uint32_t begin(int rank, const plan::Plan& plan, const RunOptions& options);
  std::uint32_t nextCall(int rank);  // counts a call of rank's as started (only its thread): its number
  [[nodiscard]] std::string where(const plan::Plan& plan) const;  // "host allreduce/ring", "... (ll)"
  // The ranks that have not started call number `call` ("rank 7 never arrived"), or "".
  [[nodiscard]] std::string lateRanks(std::uint32_t call) const;
  void resetLog();  // arrivals_.reset after the latest call any rank started
  void fail(const std::string& why);  // abort_.raise, then wakeWaiters
  virtual void wakeWaiters() = 0;     // ends every wait of the executor's ranks
  // AbortState::throwWaitFailure of rank `rank` in its call `call`, at op `op` (of `channel`, -1: not
  // named), waiting for `what` rank `peer`.
  [[noreturn]] void waitFailed(WaitResult r, const plan::Plan& plan, int rank, std::size_t op, int channel, const char* what,
                               int peer, std::chrono::nanoseconds timeout, std::uint32_t call);

  const int nranks_;
  AbortState abort_;
  mutable ArrivalLog arrivals_;  // mutable: the LL executor's arrivalStats() first records what ranks held back

 private:
  struct alignas(64) Calls {  // own cache lines: written by its rank every call
    std::atomic<std::uint32_t> started{0};
  };
  [[nodiscard]] std::uint32_t started(int rank) const {
    return calls_[static_cast<std::size_t>(rank)].started.load(std::memory_order_acquire);
  }
  const bool ll_;
  std::unique_ptr<Calls[]> calls_;  // calls_[r]: rank r's
};

}  // namespace cclab::host
