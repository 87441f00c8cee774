// Bounded waits of rank threads on a 32-bit atomic word: the one wait policy (spin, yield, futex;
// collectives/core/bounded_wait.h) on private futexes, with the executor's abort flag.
#pragma once

#include <atomic>
#include <chrono>
#include <algorithm>
#include <cstdint>
#include <thread>

#include "collectives/core/bounded_wait.h"
#include "collectives/core/futex.h"

namespace cclab::host {

using Clock = std::chrono::steady_clock;

// A word that rank threads sleep on (collectives/core/futex.h: private futexes).
using WaitWord = FutexWord<FutexScope::Private>;

using cclab::reached;  // collectives/core/bounded_wait.h
using cclab::WaitResult;

// A sleeping waiter re-checks the abort and the deadline this often.
inline constexpr std::chrono::milliseconds kMaxSleep{20};

// Waits until ready(word.value) holds, `abort` becomes true, or `deadline` passes: the one wait policy
// (collectives/core/bounded_wait.h) on a private futex, so the wait ends within about `maxSleep` of
// either, whatever `spin` is.
template <class Ready>
WaitResult waitUntil(WaitWord& word, Ready ready, const std::atomic<bool>& abort, Clock::time_point deadline,
                     std::chrono::nanoseconds spin, std::chrono::nanoseconds maxSleep = kMaxSleep);

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
                     std::chrono::nanoseconds spin, std::chrono::nanoseconds maxSleep) {
  return boundedWait(word, ready, [&abort] { return abort.load(std::memory_order_acquire); }, deadline, spin, maxSleep);
}

}  // namespace cclab::host
