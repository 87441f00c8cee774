// The Linux futex on a 32-bit atomic word, for every bounded wait in the project: the host backend's
// (threads of one process: private futexes, collectives/host/wait.h) and the process backend's (words
// in shared memory mapped by several processes: shared futexes, collectives/proc/shared_wait.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace cclab {

// Private: the waiters are threads of this process (cheaper). Shared: they may be other processes
// mapping the same page, so the kernel keys the futex by the physical page.
enum class FutexScope { Private, Shared };

// Sleeps while word == seen, at most `timeout` (nothing if timeout <= 0). Spurious wake-ups happen:
// callers re-check their condition.
void futexWait(const std::atomic<std::uint32_t>& word, std::uint32_t seen, std::chrono::nanoseconds timeout,
               FutexScope scope);

// Wakes every sleeper on `word`.
void futexWakeAll(const std::atomic<std::uint32_t>& word, FutexScope scope);

// A pause hint for spin loops (x86 `pause`; nothing elsewhere).
void cpuRelax();

}  // namespace cclab
