// Bounded waits on 32-bit words in shared memory, between processes: the one wait policy
// (collectives/core/bounded_wait.h: spin briefly, then yield, then sleep in the kernel on the word, a
// futex without FUTEX_PRIVATE_FLAG since the word is mapped in several processes); every wait ends at
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

#include "collectives/core/bounded_wait.h"
#include "collectives/core/futex.h"

namespace cclab::proc {

using Clock = std::chrono::steady_clock;

// A word in shared memory that processes sleep on (collectives/core/futex.h: shared futexes). A
// zero-filled segment holds valid SharedWords with value 0.
using SharedWord = FutexWord<FutexScope::Shared>;

using cclab::WaitResult;  // collectives/core/bounded_wait.h

inline constexpr std::chrono::milliseconds kMaxSleep{5};  // a sleeper re-checks abort and deadline this often

// Sleeps while word.value == seen, at most `timeout` (a shared futex wait).
void sleepWhileEqual(const SharedWord& word, std::uint32_t seen, std::chrono::nanoseconds timeout);
using cclab::cpuRelax;  // collectives/core/futex.h

// Sets `abort` to `code` (non-zero) unless it is set already, and wakes the abort word and `sleepers`.
void raiseAbort(SharedWord& abort, std::uint32_t code, std::initializer_list<const SharedWord*> sleepers = {});

// Waits until ready(word.value), abort.value != 0, or `deadline`: the one wait policy
// (collectives/core/bounded_wait.h) on a shared futex.
template <class Ready>
WaitResult waitUntil(const SharedWord& word, Ready ready, const SharedWord& abort, Clock::time_point deadline,
                     std::chrono::nanoseconds spin) {
  return boundedWait(word, ready, [&abort] { return abort.value.load(std::memory_order_acquire) != 0; }, deadline, spin,
                     kMaxSleep);
}

using cclab::reached;  // collectives/core/bounded_wait.h

// Waits until the counter `word` reaches `target`; throws TimeoutError "proc: timed out after N ms
// waiting for <what> (counter at V, wanted T)" at the deadline, or "proc: aborted (code C) while
// waiting for <what>" when the abort word is set.
void waitAtLeast(const SharedWord& word, std::uint32_t target, const SharedWord& abort, std::chrono::nanoseconds timeout,
                 std::chrono::nanoseconds spin, std::string_view what);

}  // namespace cclab::proc
