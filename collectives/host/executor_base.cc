#include "collectives/host/executor_base.h"

#include <algorithm>
#include <vector>

#include "collectives/core/error_text.h"
#include "collectives/core/errors.h"

namespace cclab::host {

ExecutorBase::ExecutorBase(int nranks, bool ll) : nranks_(nranks), arrivals_(std::max(nranks, 1)), ll_(ll) {
  if (nranks < 1) throw InvalidArgument(std::string(ll ? "LlExecutor" : "HostExecutor") + ": nranks must be >= 1");
}

void ExecutorBase::refuse(int rank, const plan::Plan& plan) const {
  if (rank < 0 || rank >= nranks_) throw InvalidArgument(path() + ": rank " + std::to_string(rank) + " out of range");
  throw InvalidArgument(path() + ": plan for " + std::to_string(plan.nranks) + " ranks");
}

void ExecutorBase::refuseBroken() const {
  throw Error(path() + ": communicator unusable after an earlier failure (" + reason() + ")");
}

void ExecutorBase::delayStart(int rank, const plan::Plan& plan, const RunOptions& options) {
  constexpr auto kSpinTail = std::chrono::microseconds(200);  // sleep the bulk, spin the end
  const std::string who = where(plan) + ": rank " + std::to_string(rank);
  const auto until = Clock::now() + std::min(options.startDelay, options.timeout);
  for (;;) {
    if (broken()) throw TimeoutError(who + " aborted during its start delay (" + reason() + ")");
    const auto now = Clock::now();
    if (now >= until) break;
    if (until - now > kSpinTail)  // wait.h's bound on a sleep: re-check even if a wake-up were lost
      sleepWhileEqual(abortWord_, 0, std::min<std::chrono::nanoseconds>(until - now - kSpinTail, kMaxSleep));
    else
      cpuRelax();
  }
  if (options.startDelay > options.timeout) {
    const std::string msg = who + " timed out after " + millisecondsText(options.timeout) + " in its start delay of " +
                            millisecondsText(options.startDelay) + " (straggler)";
    fail(msg);
    throw TimeoutError(msg);
  }
}

std::string ExecutorBase::reason() const {
  std::lock_guard lock(mutex_);
  return reason_;
}

std::string ExecutorBase::where(const plan::Plan& plan) const {
  return "host " + std::string(plan::name(plan.collective)) + "/" + std::string(plan::name(plan.algorithm)) + (ll_ ? " (ll)" : "");
}

void ExecutorBase::resetLog() {
  std::uint32_t latest = 0;
  for (int r = 0; r < nranks_; ++r)
    if (const std::uint32_t s = started(r); r == 0 || reached(s, latest)) latest = s;
  arrivals_.reset(latest + 1);
}

void ExecutorBase::fail(const std::string& why) {
  {
    std::lock_guard lock(mutex_);
    if (reason_.empty()) reason_ = why;
  }
  aborted_.store(true, std::memory_order_release);
  abortWord_.value.store(1, std::memory_order_seq_cst);  // ends the start delays
  abortWord_.wakeAll();
  wakeWaiters();
}

void ExecutorBase::waitFailed(WaitResult r, const plan::Plan& plan, int rank, std::size_t op, int channel, const char* what,
                              int peer, std::chrono::nanoseconds timeout, std::uint32_t call) {
  const std::string at = " at op " + std::to_string(op) + (channel >= 0 ? " (channel " + std::to_string(channel) + ")" : "");
  const std::string waitingFor = what + (" rank " + std::to_string(peer));
  if (r != WaitResult::TimedOut)
    throw TimeoutError(where(plan) + ": rank " + std::to_string(rank) + " aborted" + at + " while waiting for " + waitingFor +
                       " (" + reason() + ")");
  std::vector<int> late;  // the ranks that never started the call, named first as the likely cause
  for (int q = 0; q < nranks_; ++q)
    if (!reached(started(q), call)) late.push_back(q);
  const std::string msg = where(plan) + ": " + (late.empty() ? "" : namedRanks(late) + " never arrived; ") + "rank " +
                          std::to_string(rank) + " timed out after " + millisecondsText(timeout) + at + " waiting for " + waitingFor;
  fail(msg);
  throw TimeoutError(msg);
}

}  // namespace cclab::host
