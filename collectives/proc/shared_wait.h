// Bounded waits on 32-bit words in shared memory, between processes: the rule of the host backend
// (collectives/host/wait.h) — spin briefly, then yield, then sleep in the kernel on the word (a futex
// without FUTEX_PRIVATE_FLAG, since the word is mapped in several processes) — and every wait ends at
// a deadline or when a shared abort word becomes non-zero, whichever comes first.
//
// An aborter that knows the words its peers may sleep on wakes them (raiseAbort); a sleeper also
// re-checks the abort word every kMaxSleep, so an abort ends every wait within that interval.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <thread>

#include "collectives/core/futex.h"
#include "collectives/core/pause_clock.h"

namespace cclab::proc {

using Clock = std::chrono::steady_clock;

// A word in shared memory that processes sleep on (collectives/core/futex.h: shared futexes). A
// zero-filled segment holds valid SharedWords with value 0.
using SharedWord = FutexWord<FutexScope::Shared>;

enum class WaitResult { Ready, TimedOut, Aborted };

inline constexpr std::chrono::milliseconds kMaxSleep{5};  // a sleeper re-checks abort and deadline this often
inline constexpr std::chrono::milliseconds kYieldFor{2};  // yield this long before the first sleep

// Sleeps while word.value == seen, at most `timeout` (a shared futex wait).
void sleepWhileEqual(const SharedWord& word, std::uint32_t seen, std::chrono::nanoseconds timeout);
using cclab::cpuRelax;  // collectives/core/futex.h

// Sets `abort` to `code` (non-zero) unless it is set already, and wakes the abort word and `sleepers`.
void raiseAbort(SharedWord& abort, std::uint32_t code, std::initializer_list<const SharedWord*> sleepers = {});

// Waits until ready(word.value), abort.value != 0, or `deadline` (counting only the time this thread
// ran: collectives/core/pause_clock.h).
template <class Ready>
WaitResult waitUntil(const SharedWord& word, Ready ready, const SharedWord& abort, Clock::time_point deadline,
                     std::chrono::nanoseconds spin) {
  const auto aborted = [&abort] { return abort.value.load(std::memory_order_acquire) != 0; };
  const auto start = Clock::now();
  PauseClock clock(start);  // the deadline counts only time this thread ran (a stopped job is no late peer)
  if (spin.count() > 0) {
    constexpr int kChecksPerClockRead = 64;
    const auto spinEnd = std::min(start + spin, deadline);
    do {
      for (int i = 0; i < kChecksPerClockRead; ++i) {
        if (ready(word.value.load(std::memory_order_acquire))) return WaitResult::Ready;
        cpuRelax();
      }
      if (aborted()) return WaitResult::Aborted;
    } while (Clock::now() < spinEnd);
  }
  const auto yieldEnd = Clock::now() + kYieldFor;
  auto& sleepers = const_cast<std::atomic<std::uint32_t>&>(word.sleepers);
  for (;;) {
    const std::uint32_t seen = word.value.load(std::memory_order_acquire);
    if (ready(seen)) return WaitResult::Ready;
    if (aborted()) return WaitResult::Aborted;
    const auto now = clock.now();
    if (now >= deadline) return WaitResult::TimedOut;
    if (now < yieldEnd) {
      std::this_thread::yield();
      continue;
    }
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    if (!ready(word.value.load(std::memory_order_seq_cst)) && !aborted())
      sleepWhileEqual(word, seen, std::min<std::chrono::nanoseconds>(deadline - now, kMaxSleep));
    sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }
}

// Whether a wrapping counter `value` has reached `target`.
constexpr bool reached(std::uint32_t value, std::uint32_t target) {
  return static_cast<std::int32_t>(value - target) >= 0;
}

// Waits until the counter `word` reaches `target`; throws TimeoutError "proc: timed out after N ms
// waiting for <what> (counter at V, wanted T)" at the deadline, or "proc: aborted (code C) while
// waiting for <what>" when the abort word is set.
void waitAtLeast(const SharedWord& word, std::uint32_t target, const SharedWord& abort, std::chrono::nanoseconds timeout,
                 std::chrono::nanoseconds spin, std::string_view what);

}  // namespace cclab::proc
