// ArrivalLog: when each rank arrived at each collective of a HostExecutor, reduced as it goes to
// per-rank totals (lateness summed and maxed, times arrived last), without allocating per call.
//
// Arrivals are nanoseconds on the executor's steady clock. A call's arrivals sit in a slot of a fixed
// ring (window = 2 x nranks + 64 calls, slot = call number mod window) until the last rank of that
// call arrives; that rank folds the call into the totals and frees the slot for the call one window
// later. Each slot carries the call number it expects, so a rank that runs a whole window ahead of a
// peer (possible only with per-rank calls) finds its slot still held, and the log stops counting
// (ArrivalStats::incomplete) rather than mix two calls.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "collectives/communicator.h"
#include "collectives/host/wait.h"

namespace cclab::host {

class ArrivalLog {
 public:
  explicit ArrivalLog(int nranks);

  // Rank `rank` arrived at its call number `call` (1, 2, ...; the same number on every rank) at `when`.
  // Lock-free; the last rank to arrive at a call also folds it into the totals (O(nranks)).
  void record(int rank, std::uint32_t call, Clock::time_point when);
  // Forgets everything; `nextCall` is the first call number to count (no rank may have arrived at it).
  // Between calls only: an arrival racing with it may be lost or counted.
  void reset(std::uint32_t nextCall);
  [[nodiscard]] ArrivalStats stats() const;
  [[nodiscard]] std::uint32_t window() const { return window_; }

 private:
  // Packed (8 to a cache line), and times_ rank-major: a rank that records a batch of consecutive
  // calls (ll_executor.h holds up to 16 back) touches a few lines, not one or two per call, and
  // writes its times on lines no other rank writes.
  struct Slot {
    std::atomic<std::uint32_t> call{0};     // the call number this slot collects
    std::atomic<std::uint32_t> arrived{0};  // ranks recorded for it so far
  };
  struct Totals {
    std::atomic<std::int64_t> lateness{0};     // ns
    std::atomic<std::int64_t> maxLateness{0};  // ns
    std::atomic<std::int64_t> last{0};
  };

  void finish(std::uint32_t slot, std::uint32_t call);

  int nranks_;
  std::uint32_t window_;
  Clock::time_point epoch_;
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<std::atomic<std::int64_t>[]> times_;  // [rank * window + slot]: ns since epoch_
  std::unique_ptr<Totals[]> totals_;
  std::atomic<std::int64_t> calls_{0};
  std::atomic<bool> incomplete_{false};
};

}  // namespace cclab::host
