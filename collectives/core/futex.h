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

// A pause hint for spin loops (x86 `pause`; nothing elsewhere). Inline: a call around a ~25 ns
// instruction (AMD EPYC here) would add to how late a spinning waiter sees its word change.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// A word that waiters sleep on and a count of its sleepers, so a store makes a system call only when
// someone sleeps. All zero is a valid word with value 0 (a zero-filled shared segment holds them).
// The host backend uses FutexWord<Private> (host::WaitWord), the proc layer FutexWord<Shared>
// (proc::SharedWord).
template <FutexScope Scope>
struct alignas(64) FutexWord {
  std::atomic<std::uint32_t> value{0};
  std::atomic<std::uint32_t> sleepers{0};

  void store(std::uint32_t v) {  // publishes v and wakes sleepers
    value.store(v, std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_seq_cst) != 0) wakeAll();
  }
  void add(std::uint32_t d) {  // value += d, and wakes sleepers
    value.fetch_add(d, std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_seq_cst) != 0) wakeAll();
  }
  void wakeAll() const { futexWakeAll(value, Scope); }
};

}  // namespace cclab
