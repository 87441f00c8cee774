#include "collectives/host/abort_state.h"

#include <algorithm>

#include "collectives/core/errors.h"

namespace cclab::host {

void AbortState::raise(const std::string& why) {
  {
    std::lock_guard lock(mutex_);
    if (reason_.empty()) reason_ = why;
  }
  flag_.store(true, std::memory_order_release);
  word_.value.store(1, std::memory_order_seq_cst);
  word_.wakeAll();
}

std::string AbortState::reason() const {
  std::lock_guard lock(mutex_);
  return reason_;
}

bool AbortState::pauseUntil(Clock::time_point until) const {
  constexpr auto kSpinTail = std::chrono::microseconds(200);  // sleep the bulk, spin the end
  for (;;) {
    if (raised()) return false;
    const auto now = Clock::now();
    if (now >= until) return true;
    if (until - now > kSpinTail)
      sleepWhileEqual(word_, 0, std::min<std::chrono::nanoseconds>(until - now - kSpinTail, kMaxSleep));  // wait.h's: re-check even if a wake-up were lost
    else
      cpuRelax();
  }
}

void AbortState::delayStart(const std::string& who, std::chrono::nanoseconds delay, std::chrono::nanoseconds timeout,
                            const std::function<void(const std::string&)>& fail) const {
  const auto start = Clock::now();
  const auto delayEnd = start + delay;
  const auto deadline = start + timeout;
  if (!pauseUntil(std::min(delayEnd, deadline)))
    throw TimeoutError(who + " aborted during its start delay (" + reason() + ")");
  if (delayEnd > deadline) {
    const std::string msg = who + " timed out after " + milliseconds(timeout) + " in its start delay of " +
                            milliseconds(delay) + " (straggler)";
    fail(msg);
    throw TimeoutError(msg);
  }
}

void AbortState::throwWaitFailure(WaitResult r, const std::string& where, int rank, const std::string& at,
                                  const std::string& waitingFor, std::chrono::nanoseconds timeout,
                                  const std::function<std::string()>& late,
                                  const std::function<void(const std::string&)>& fail) const {
  if (r == WaitResult::TimedOut) {
    const std::string cause = late();
    const std::string msg = where + ": " + (cause.empty() ? "" : cause + "; ") + "rank " + std::to_string(rank) +
                            " timed out after " + milliseconds(timeout) + at + " waiting for " + waitingFor;
    fail(msg);
    throw TimeoutError(msg);
  }
  throw TimeoutError(where + ": rank " + std::to_string(rank) + " aborted" + at + " while waiting for " + waitingFor + " (" +
                     reason() + ")");
}

std::string neverArrived(const std::vector<int>& late) {
  constexpr std::size_t kMaxNamed = 8;  // a message stays one readable line
  if (late.empty()) return "";
  std::string text = late.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < late.size() && i < kMaxNamed; ++i) text += (i ? ", " : "") + std::to_string(late[i]);
  if (late.size() > kMaxNamed) text += " and " + std::to_string(late.size() - kMaxNamed) + " more";
  return text + " never arrived";
}

std::string milliseconds(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

ExecutorBase::ExecutorBase(int nranks, bool ll) : nranks_(nranks), arrivals_(std::max(nranks, 1)), ll_(ll) {
  if (nranks < 1) throw InvalidArgument(std::string(ll ? "LlExecutor" : "HostExecutor") + ": nranks must be >= 1");
  calls_ = std::make_unique<Calls[]>(static_cast<std::size_t>(nranks));
}

void ExecutorBase::check(int rank, const plan::Plan& plan) const {
  const std::string path = ll_ ? "host ll" : "host";
  if (rank < 0 || rank >= nranks_) throw InvalidArgument(path + ": rank " + std::to_string(rank) + " out of range");
  if (plan.nranks != nranks_) throw InvalidArgument(path + ": plan for " + std::to_string(plan.nranks) + " ranks");
}

void ExecutorBase::checkUsable() const {
  if (broken())
    throw Error(std::string(ll_ ? "host ll" : "host") + ": communicator unusable after an earlier failure (" + abort_.reason() + ")");
}

std::uint32_t ExecutorBase::begin(int rank, const plan::Plan& plan, const RunOptions& options) {
  checkUsable();
  if (options.startDelay.count() > 0)
    abort_.delayStart(where(plan) + ": rank " + std::to_string(rank), options.startDelay, options.timeout,
                      [this](const std::string& why) { fail(why); });
  return nextCall(rank);
}

std::uint32_t ExecutorBase::nextCall(int rank) {
  auto& n = calls_[static_cast<std::size_t>(rank)].started;
  const std::uint32_t call = n.load(std::memory_order_relaxed) + 1;  // only this rank's thread writes it
  n.store(call, std::memory_order_release);
  return call;
}

std::string ExecutorBase::where(const plan::Plan& plan) const {
  return "host " + std::string(plan::name(plan.collective)) + "/" + std::string(plan::name(plan.algorithm)) + (ll_ ? " (ll)" : "");
}

std::string ExecutorBase::lateRanks(std::uint32_t call) const {
  return lateFor(nranks_, call, [this](int r) { return started(r); });
}

void ExecutorBase::resetLog() {
  arrivals_.reset(latestCall(nranks_, [this](int r) { return started(r); }) + 1);
}

void ExecutorBase::fail(const std::string& why) {
  abort_.raise(why);
  wakeWaiters();
}

void ExecutorBase::waitFailed(WaitResult r, const plan::Plan& plan, int rank, std::size_t op, int channel, const char* what,
                              int peer, std::chrono::nanoseconds timeout, std::uint32_t call) {
  abort_.throwWaitFailure(
      r, where(plan), rank, " at op " + std::to_string(op) + (channel >= 0 ? " (channel " + std::to_string(channel) + ")" : ""),
      what + (" rank " + std::to_string(peer)), timeout, [&] { return lateRanks(call); }, [this](const std::string& why) { fail(why); });
}

}  // namespace cclab::host
