// Shared (inter-process) futex calls and the throwing form of waitUntil.
#include "collectives/proc/shared_wait.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>
#include <string>

#include "collectives/core/errors.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cclab::proc {

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

void SharedWord::store(std::uint32_t v) {
  value.store(v, std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) != 0) wakeAll();
}

void SharedWord::add(std::uint32_t d) {
  value.fetch_add(d, std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) != 0) wakeAll();
}

void SharedWord::wakeAll() const {
  // FUTEX_WAKE, not FUTEX_WAKE_PRIVATE: the sleepers are other processes mapping the same page.
  syscall(SYS_futex, const_cast<std::uint32_t*>(reinterpret_cast<const std::uint32_t*>(&value)), FUTEX_WAKE, INT_MAX,
          nullptr, nullptr, 0);
}

void sleepWhileEqual(const SharedWord& word, std::uint32_t seen, std::chrono::nanoseconds timeout) {
  if (timeout.count() <= 0) return;
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000000000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1000000000);
  syscall(SYS_futex, const_cast<std::uint32_t*>(reinterpret_cast<const std::uint32_t*>(&word.value)), FUTEX_WAIT, seen,
          &ts, nullptr, 0);
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
