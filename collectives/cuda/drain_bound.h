// How long the CUDA communicator's synchronize() waits for a stream to drain before it gives up with
// "did not drain" (pure host code, unit-tested on the CPU).
//
// The low-latency kernel bounds its own spins (ll_kernel.cu, Spinner): a waiter past its deadline
// (kernel start + the call's timeout) keeps spinning for up to two grace periods, one per report
// level, so that the waiter that names the late rank reports first. The host must wait past that, or
// it reports "stream did not drain" instead of the kernel's "rank R timed out waiting for rank Q".
// A queue of `calls` calls since the last drain may each take that long (plus a straggler's delay).
#pragma once

#include <chrono>
#include <cstdint>

namespace cclab::cuda {

// The kernel's grace period per report level: a quarter of the timeout, at least 1 ms (the clock's
// granularity and a block's polling period are far below that). ll_kernel.cu uses these two.
inline constexpr std::uint64_t kLlGraceDivisor = 4;
inline constexpr std::uint64_t kLlMinGraceNs = 1000000;
inline constexpr int kLlReportLevels = 2;  // report levels above the first: each adds one grace period
// What the host adds for its own polling and the kernel's last stores to reach host-mapped memory.
inline constexpr std::chrono::milliseconds kDrainMargin{1000};
// Longest wait the bound ever asks for (a day-long timeout times many queued calls would overflow the
// clock's arithmetic; no legitimate queue takes a week).
inline constexpr std::chrono::hours kMaxDrainBound{24 * 7};

// The grace period of a call with `timeout`.
std::chrono::nanoseconds llGracePeriod(std::chrono::milliseconds timeout);

// The latest moment, after its start, at which the ll kernel of one call with `timeout` has either
// finished or reported: deadline plus every report level's grace period.
std::chrono::nanoseconds llReportBound(std::chrono::milliseconds timeout);

// How long to wait for a stream holding `calls` (>= 1; fewer count as 1) calls since the last drain,
// each with `timeout` and a straggler starting `stragglerDelay` late: calls x (report bound + delay)
// + kDrainMargin, at most kMaxDrainBound.
std::chrono::milliseconds drainBound(std::chrono::milliseconds timeout, std::chrono::microseconds stragglerDelay,
                                     std::int64_t calls);

}  // namespace cclab::cuda
