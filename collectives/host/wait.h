// Bounded waits on a 32-bit atomic word: spin briefly, then yield, then block in the kernel (futex)
// with a timeout. Rank threads may outnumber the cores (16 rank threads on 2 cores), so a wait must not
// keep a core busy for long; a wait must also never hang, so it gives up at a deadline.
#pragma once

#include <atomic>
#include <chrono>
#include <algorithm>
#include <cstdint>
#include <thread>

#include "collectives/core/futex.h"
#include "collectives/core/pause_clock.h"

namespace cclab::host {

using Clock = std::chrono::steady_clock;

// A word that rank threads sleep on (collectives/core/futex.h: private futexes).
using WaitWord = FutexWord<FutexScope::Private>;

enum class WaitResult { Ready, TimedOut, Aborted };

// Waits until ready(word.value) holds, `abort` becomes true, or `deadline` passes: busy for at most
// `spin`, then yielding, then asleep in the kernel. Every phase checks abort and the deadline, so the
// wait ends within about 20 ms (kMaxSleep) of either, whatever `spin` is. The deadline counts only
// the time this thread ran (collectives/core/pause_clock.h): a process stopped and resumed is not late.
template <class Ready>
WaitResult waitUntil(WaitWord& word, Ready ready, const std::atomic<bool>& abort, Clock::time_point deadline,
                     std::chrono::nanoseconds spin);

// The blocking step: sleeps while word.value == seen, for at most `timeout`.
void sleepWhileEqual(WaitWord& word, std::uint32_t seen, std::chrono::nanoseconds timeout);

// The busy period of waits: CCLAB_SPIN_US (whole microseconds in [0, kMaxSpin]) when set, else
// `fallback`. A value that is not a whole number or exceeds the bound throws InvalidArgument naming the
// variable: spinning longer than a futex wake-up costs (~200 µs here) only burns a core, and beyond
// 10 ms a wait would outlast the yield and sleep phases it exists to shortcut.
inline constexpr std::chrono::microseconds kMaxSpin{10000};
// Unset, it is 0 when this process may run on one CPU only (sched_getaffinity): the waited-for peer shares
// that CPU, and a spin would only delay it by a scheduler quantum.
std::chrono::nanoseconds spinFromEnvironment(std::chrono::nanoseconds fallback);
// The CPUs this process may run on (its affinity mask), or 0 when it cannot be read.
int usableCpus();

using cclab::cpuRelax;  // collectives/core/futex.h

template <class Ready>
WaitResult waitUntil(WaitWord& word, Ready ready, const std::atomic<bool>& abort, Clock::time_point deadline,
                     std::chrono::nanoseconds spin) {
  const auto start = Clock::now();
  PauseClock clock(start);  // the deadline counts only time this thread ran (a stopped job is no late peer)
  if (spin.count() > 0) {
    // The busy phase ends at the spin budget or the deadline, whichever comes first, and leaves on an
    // abort: a long CCLAB_SPIN_US must never stretch or disable the timeout.
    constexpr int kChecksPerClockRead = 64;
    const auto spinEnd = std::min(start + spin, deadline);
    do {
      for (int i = 0; i < kChecksPerClockRead; ++i) {
        if (ready(word.value.load(std::memory_order_acquire))) return WaitResult::Ready;
        cpuRelax();
      }
      if (abort.load(std::memory_order_acquire)) return WaitResult::Aborted;
    } while (Clock::now() < spinEnd);
  }
  constexpr std::chrono::milliseconds kMaxSleep{20};  // re-check abort and the deadline this often
  // Yielding keeps the thread runnable: in a virtual machine waking a thread that sleeps in the kernel
  // can cost ~200 µs (an idle vCPU must be woken), far more than a collective step, so a wait yields
  // for this long before it sleeps.
  constexpr std::chrono::milliseconds kYieldFor{2};
  const auto yieldEnd = Clock::now() + kYieldFor;
  for (;;) {
    const std::uint32_t seen = word.value.load(std::memory_order_acquire);
    if (ready(seen)) return WaitResult::Ready;
    if (abort.load(std::memory_order_acquire)) return WaitResult::Aborted;
    const auto now = clock.now();
    if (now >= deadline) return WaitResult::TimedOut;
    if (now < yieldEnd) {
      std::this_thread::yield();
      continue;
    }
    word.sleepers.fetch_add(1, std::memory_order_seq_cst);
    if (!ready(word.value.load(std::memory_order_seq_cst)))
      sleepWhileEqual(word, seen, std::min<std::chrono::nanoseconds>(deadline - now, kMaxSleep));
    word.sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace cclab::host
