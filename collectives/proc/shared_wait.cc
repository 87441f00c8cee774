// Shared (inter-process) futex words (collectives/core/futex.h) and the throwing form of waitUntil.
#include "collectives/proc/shared_wait.h"

#include <string>

#include "collectives/core/errors.h"

namespace cclab::proc {

// Shared futexes, not private ones: the sleepers are other processes mapping the same page.
void sleepWhileEqual(const SharedWord& word, std::uint32_t seen, std::chrono::nanoseconds timeout) {
  futexWait(word.value, seen, timeout, FutexScope::Shared);
}

void raiseAbort(SharedWord& abort, std::uint32_t code, std::initializer_list<const SharedWord*> sleepers) {
  std::uint32_t expected = 0;
  abort.value.compare_exchange_strong(expected, code == 0 ? 1 : code, std::memory_order_seq_cst);
  abort.wakeAll();
  for (const SharedWord* w : sleepers)
    if (w != nullptr) w->wakeAll();
}

void waitAtLeast(const SharedWord& word, std::uint32_t target, const SharedWord& abort, std::chrono::nanoseconds timeout,
                 std::chrono::nanoseconds spin, std::string_view what) {
  if (reached(word.value.load(std::memory_order_acquire), target)) return;
  const auto r = waitUntil(word, [target](std::uint32_t v) { return reached(v, target); }, abort, Clock::now() + timeout, spin);
  if (r == WaitResult::Ready) return;
  if (r == WaitResult::TimedOut)
    throw TimeoutError("proc: timed out after " +
                       std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()) +
                       " ms waiting for " + std::string(what) + " (counter at " +
                       std::to_string(word.value.load(std::memory_order_acquire)) + ", wanted " + std::to_string(target) + ")");
  throw TimeoutError("proc: aborted (code " + std::to_string(abort.value.load(std::memory_order_acquire)) +
                     ") while waiting for " + std::string(what));
}

}  // namespace cclab::proc
