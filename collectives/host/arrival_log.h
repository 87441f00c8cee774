// ArrivalLog: when each rank arrived at each collective of a HostExecutor or LlExecutor, reduced to
// per-rank totals (lateness summed and maxed, times arrived last), without allocating per call.
//
// Arrivals are nanoseconds on the executor's steady clock. Each rank writes its arrivals in a row of
// its own (window = 2 x nranks + 64 cells, cell = call number mod window, each cell holding the call
// number and the time) and publishes the last call it recorded (`through`) on a cache line of its
// own: recording shares no cache line with the other ranks, so it moves no line between cores. Calls
// that every rank has passed (call <= the smallest `through`) are folded into the totals in batches,
// under a lock, by rank 0 every kFoldEvery calls (in a group call the driving thread, which waits for
// the workers anyway), by a rank that needs a cell back (below), or by stats(). A call some rank skipped (its cell holds another call number) is
// not counted. A rank about to reuse a cell whose call is not folded yet (it runs a whole window ahead
// of a peer: possible only with per-rank calls) first folds what it can; if the cell's call is still
// open the log stops counting (ArrivalStats::incomplete) rather than mix two calls.
//
// (Why rows: a counter shared by the ranks, bumped at every arrival, with the last arriver folding its
// call at once, cost ~0.06 µs per 8-byte call at 2 ranks; docs/results/cpu-peers.md.)
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "collectives/call/vocabulary.h"
#include "collectives/host/wait.h"

namespace cclab::host {

class ArrivalLog {
 public:
  // Calls between two folds by rank 0's recording.
  static constexpr std::uint32_t kFoldEvery = 16;

  explicit ArrivalLog(int nranks);

  // Rank `rank` arrived at its call number `call` (1, 2, ...; the same number on every rank) at `when`.
  // One rank records from one thread at a time, calls in increasing order. Lock-free except at rank
  // 0's fold points (every kFoldEvery calls), where it folds finished calls if no one else is folding.
  void record(int rank, std::uint32_t call, Clock::time_point when);
  // Forgets everything; `nextCall` is the first call number to count (no rank may have arrived at it).
  // Between calls only: an arrival racing with it may be lost or counted.
  void reset(std::uint32_t nextCall);
  // Folds every call all ranks have recorded, then reports the totals. Between calls only.
  [[nodiscard]] ArrivalStats stats() const;
  [[nodiscard]] std::uint32_t window() const { return window_; }

 private:
  struct Cell {
    std::atomic<std::uint32_t> call{0};  // the call whose arrival this is (0: none)
    std::atomic<std::int64_t> ns{0};     // ns since epoch_
  };
  struct alignas(64) Row {
    std::atomic<std::uint32_t> through{0};      // the last call this rank recorded (published)
    std::atomic<std::uint32_t> seenFolded{0};   // this rank's copy of folded_ (only it touches it)
  };
  struct Totals {
    std::int64_t lateness = 0;     // ns
    std::int64_t maxLateness = 0;  // ns
    std::int64_t last = 0;
  };

  // Folds the calls after folded_ up to the smallest `through`; the caller holds foldMutex_.
  void foldLocked() const;
  [[nodiscard]] Cell& cell(int rank, std::uint32_t call) const {
    return cells_[static_cast<std::size_t>(rank) * window_ + call % window_];
  }

  int nranks_;
  std::uint32_t window_;
  Clock::time_point epoch_;
  std::unique_ptr<Cell[]> cells_;  // [rank * window + call % window], rank-major: rows on their own lines
  std::unique_ptr<Row[]> rows_;
  alignas(64) std::atomic<bool> incomplete_{false};  // read by every record, written once
  alignas(64) mutable std::atomic<std::uint32_t> folded_{0};  // calls up to this one are folded
  alignas(64) mutable std::mutex foldMutex_;  // guards the fold and what it writes below
  mutable std::unique_ptr<Totals[]> totals_;
  mutable std::int64_t calls_ = 0;
};

}  // namespace cclab::host
