// Bounded waits on a 32-bit atomic word: spin briefly, then yield, then block in the kernel (futex)
// with a timeout. The machines here have 2 cores and may run 16 rank threads, so a wait must not keep
// a core busy for long; a wait must also never hang, so it gives up at a deadline.
#pragma once

#include <atomic>
#include <chrono>
#include <algorithm>
#include <cstdint>
#include <thread>

namespace cclab::host {

using Clock = std::chrono::steady_clock;

// A word that waiters sleep on and a count of sleepers, so a notifier makes a system call only when
// someone sleeps.
struct alignas(64) WaitWord {
  std::atomic<std::uint32_t> value{0};
  std::atomic<std::uint32_t> sleepers{0};

  // Publishes a new value and wakes sleepers.
  void store(std::uint32_t v);
  void wakeAll();
};

enum class WaitResult { Ready, TimedOut, Aborted };

// Waits until ready(word.value) holds, `abort` becomes true, or `deadline` passes: busy for at most
// `spin`, then yielding, then asleep in the kernel.
template <class Ready>
WaitResult waitUntil(WaitWord& word, Ready ready, const std::atomic<bool>& abort, Clock::time_point deadline,
                     std::chrono::nanoseconds spin);

// The blocking step: sleeps while word.value == seen, for at most `timeout`.
void sleepWhileEqual(WaitWord& word, std::uint32_t seen, std::chrono::nanoseconds timeout);

void cpuRelax();

template <class Ready>
WaitResult waitUntil(WaitWord& word, Ready ready, const std::atomic<bool>& abort, Clock::time_point deadline,
                     std::chrono::nanoseconds spin) {
  if (spin.count() > 0) {
    constexpr int kChecksPerClockRead = 64;
    const auto spinEnd = Clock::now() + spin;
    do {
      for (int i = 0; i < kChecksPerClockRead; ++i) {
        if (ready(word.value.load(std::memory_order_acquire))) return WaitResult::Ready;
        cpuRelax();
      }
    } while (Clock::now() < spinEnd);
  }
  constexpr std::chrono::milliseconds kMaxSleep{20};  // re-check abort and the deadline this often
  // Yielding keeps the thread runnable: on these VMs waking a thread that sleeps in the kernel costs
  // ~200 µs (an idle vCPU must be woken), far more than a collective step, so a wait yields for this
  // long before it sleeps.
  constexpr std::chrono::milliseconds kYieldFor{2};
  const auto yieldEnd = Clock::now() + kYieldFor;
  for (;;) {
    const std::uint32_t seen = word.value.load(std::memory_order_acquire);
    if (ready(seen)) return WaitResult::Ready;
    if (abort.load(std::memory_order_acquire)) return WaitResult::Aborted;
    const auto now = Clock::now();
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
