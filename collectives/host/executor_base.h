// ExecutorBase: what the host's executors (host_executor.h, ll_executor.h) keep alike about their
// ranks' calls: the rank count; the abort flag every wait polls, the word start delays sleep on and
// the first reason; the ArrivalLog of the calls; the checks, the straggler's bounded start delay and
// the call number that begin a rank's call (each executor keeps the ranks' call counts: started());
// and the one-line texts of a failure. Errors are headed "host" for the slot executor, "host ll" for
// the LL executor (its plans named "host allreduce/ring (ll)").
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

#include "collectives/call/vocabulary.h"
#include "collectives/host/arrival_log.h"
#include "collectives/host/wait.h"
#include "collectives/plan/plan.h"

namespace cclab::host {

class ExecutorBase {
 public:
  ExecutorBase(const ExecutorBase&) = delete;
  ExecutorBase& operator=(const ExecutorBase&) = delete;
  virtual ~ExecutorBase() = default;

  [[nodiscard]] int nranks() const { return nranks_; }
  // After a timeout the connections are out of step: every later run() throws.
  [[nodiscard]] bool broken() const { return aborted_.load(std::memory_order_acquire); }
  // Marks the executor broken with `why` and ends every wait and start delay now (they throw).
  void abort(const std::string& why) { fail(why); }

 protected:
  ExecutorBase(int nranks, bool ll);  // refuses nranks < 1
  // Refuses a rank out of range or a plan for another number of ranks.
  void check(int rank, const plan::Plan& plan) const {
    if (rank < 0 || rank >= nranks_ || plan.nranks != nranks_) refuse(rank, plan);
  }
  void checkUsable() const {  // refuses a call after a failure
    if (broken()) refuseBroken();
  }
  // The start of a rank's call: checkUsable, the straggler's start delay (delayStart), then nextCall.
  std::uint32_t begin(int rank, const plan::Plan& plan, const RunOptions& options, std::atomic<std::uint32_t>& calls) {
    checkUsable();
    if (options.startDelay.count() > 0) delayStart(rank, plan, options);
    return nextCall(calls);
  }
  // Counts a call of a rank's as started in `calls`, its count, which only its thread writes (each
  // executor keeps it with the rank's other per-call state: a line of its own is one more per call).
  static std::uint32_t nextCall(std::atomic<std::uint32_t>& calls) {
    const std::uint32_t call = calls.load(std::memory_order_relaxed) + 1;
    calls.store(call, std::memory_order_release);
    return call;
  }
  [[nodiscard]] virtual std::uint32_t started(int rank) const = 0;  // its count: the calls it has started
  [[nodiscard]] const std::atomic<bool>& abortFlag() const { return aborted_; }  // the waits' abort condition
  [[nodiscard]] std::string where(const plan::Plan& plan) const;  // "host allreduce/ring", "... (ll)"
  void resetLog();  // arrivals_.reset after the latest call any rank started
  // Keeps `why` if it is the first reason, raises the flag, wakes the start delays, then wakeWaiters.
  void fail(const std::string& why);
  virtual void wakeWaiters() = 0;  // ends every wait of the executor's ranks
  // The one-line TimeoutError of a wait of rank `rank` in its call `call` that ended with `r` (TimedOut
  // or Aborted), at op `op` (of `channel`; -1: not named), waiting for `what` rank `peer`:
  // "<where>: [<late>; ]rank R timed out after T at op N waiting for <what> rank P", thrown after
  // fail() with it (so every other rank stops too; <late>, the ranks that never started the call,
  // comes first as the likely cause), or "<where>: rank R aborted at op N while waiting for ... (<reason>)".
  [[noreturn]] void waitFailed(WaitResult r, const plan::Plan& plan, int rank, std::size_t op, int channel, const char* what,
                               int peer, std::chrono::nanoseconds timeout, std::uint32_t call);

  const int nranks_;
  mutable ArrivalLog arrivals_;  // mutable: the LL executor's arrivalStats() first records what ranks held back

 private:
  [[nodiscard]] std::string path() const { return ll_ ? "host ll" : "host"; }  // the head of errors
  [[noreturn]] void refuse(int rank, const plan::Plan& plan) const;
  [[noreturn]] void refuseBroken() const;
  // Sleeps `options.startDelay`, spinning its last 200 µs for a precise end; throws TimeoutError
  // "<where>: rank R aborted during its start delay (...)" on an abort, or, when the delay outlasts
  // the timeout, fails the executor with "<where>: rank R timed out after ... (straggler)".
  void delayStart(int rank, const plan::Plan& plan, const RunOptions& options);
  [[nodiscard]] std::string reason() const;

  const bool ll_;
  // Polled by every wait of every rank: a 128-byte block (CPUs fetch lines in pairs) that nothing
  // written in a call shares (the arrival log's fold line lies just before).
  alignas(128) std::atomic<bool> aborted_{false};
  WaitWord abortWord_;  // 1 once aborted: start delays sleep on it
  mutable std::mutex mutex_;
  std::string reason_;
};

}  // namespace cclab::host
