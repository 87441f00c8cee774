// The one wait policy of the project, for threads (private futexes: collectives/host/wait.h) and for
// processes (shared futexes on words in shared memory: collectives/proc/shared_wait.h): spin briefly,
// then yield, then sleep in the kernel on the word, and give up at a deadline or on an abort.
//
// Rank threads or processes may outnumber the cores, so a wait must not keep a core busy for long;
// a wait must also never hang, so it ends at its deadline, and every phase checks the abort.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "collectives/core/futex.h"
#include "collectives/core/pause_clock.h"

namespace cclab {

enum class WaitResult { Ready, TimedOut, Aborted };

// Whether a wrapping counter `value` has reached `target` (the waits' counters wrap at 2^32).
constexpr bool reached(std::uint32_t value, std::uint32_t target) {
  return static_cast<std::int32_t>(value - target) >= 0;
}

// Yielding keeps the waiter runnable: in a virtual machine waking a thread that sleeps in the kernel
// can cost ~200 µs (an idle vCPU must be woken), far more than a collective step, so a wait yields for
// this long before it sleeps.
inline constexpr std::chrono::milliseconds kWaitYieldFor{2};

// Waits until ready(word.value) holds, aborted() holds, or `deadline` passes: busy for at most `spin`
// (checking the clock and the abort every 64 checks), then yielding for kWaitYieldFor, then asleep on
// the word for at most `maxSleep` at a time (a sleeper re-checks the abort and the deadline that
// often, and also after a wake-up). A sleeper counts itself in word.sleepers before its last check, so
// a waker that fences and then reads the count (FutexWord::add/store) cannot miss it. The busy phase
// ends at the deadline too: a long spin never stretches or disables the timeout. The deadline counts
// only the time this thread ran (collectives/core/pause_clock.h): a process stopped and resumed is not late.
template <FutexScope Scope, class Ready, class Aborted>
WaitResult boundedWait(const FutexWord<Scope>& word, Ready ready, Aborted aborted,
                       std::chrono::steady_clock::time_point deadline, std::chrono::nanoseconds spin,
                       std::chrono::nanoseconds maxSleep) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  PauseClock clock(start);  // a stopped job is no late peer
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
  const auto yieldEnd = Clock::now() + kWaitYieldFor;
  // The wait only reads the word and counts itself a sleeper (a word in shared memory may be const).
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
      futexWait(word.value, seen, std::min<std::chrono::nanoseconds>(deadline - now, maxSleep), Scope);
    sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace cclab
