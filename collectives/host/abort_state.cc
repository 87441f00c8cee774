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

}  // namespace cclab::host
