// ArrivalLog (arrival_log.h): per-rank rows of arrivals, folded into per-rank totals in batches.
#include "collectives/host/arrival_log.h"

#include <algorithm>

#include "collectives/core/errors.h"

namespace cclab::host {
namespace {

constexpr std::uint32_t kExtraWindow = 64;

// Whether call number `a` comes after `b` (call numbers wrap around after 2^32 calls).
bool after(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) > 0; }

}  // namespace

ArrivalLog::ArrivalLog(int nranks)
    : nranks_(nranks), window_(2 * static_cast<std::uint32_t>(nranks) + kExtraWindow), epoch_(Clock::now()) {
  if (nranks < 1) throw InvalidArgument("ArrivalLog: nranks must be >= 1");
  cells_ = std::make_unique<Cell[]>(static_cast<std::size_t>(window_) * static_cast<std::size_t>(nranks));
  rows_ = std::make_unique<Row[]>(static_cast<std::size_t>(nranks));
  totals_ = std::make_unique<Totals[]>(static_cast<std::size_t>(nranks));
  reset(1);
}

void ArrivalLog::record(int rank, std::uint32_t call, Clock::time_point when) {
  if (incomplete_.load(std::memory_order_relaxed)) return;
  Row& row = rows_[static_cast<std::size_t>(rank)];
  if (!after(call, row.through.load(std::memory_order_relaxed))) return;  // started before the last reset
  // This rank's cell last held call - window: that call must be folded before the cell is reused.
  const std::uint32_t previous = call - window_;
  std::uint32_t folded = row.seenFolded.load(std::memory_order_relaxed);
  if (after(previous, folded)) {
    folded = folded_.load(std::memory_order_acquire);
    if (after(previous, folded)) {
      const std::lock_guard lock(foldMutex_);  // a fold is a bounded computation: no wait inside
      foldLocked();
      folded = folded_.load(std::memory_order_relaxed);
    }
    if (after(previous, folded)) {  // a peer has not recorded that call: this rank ran a window ahead
      incomplete_.store(true, std::memory_order_relaxed);
      return;
    }
    row.seenFolded.store(folded, std::memory_order_relaxed);
  }
  Cell& c = cell(rank, call);
  c.ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(when - epoch_).count(), std::memory_order_relaxed);
  c.call.store(call, std::memory_order_relaxed);
  row.through.store(call, std::memory_order_release);  // publishes the cell to the folder
  // Rank 0 folds: in a group call it is the driving thread, which then waits for the workers anyway.
  if (rank == 0 && call % kFoldEvery == 0 && foldMutex_.try_lock()) {
    foldLocked();
    foldMutex_.unlock();
  }
}

void ArrivalLog::foldLocked() const {
  std::uint32_t through = rows_[0].through.load(std::memory_order_acquire);
  for (int r = 1; r < nranks_; ++r) {
    const std::uint32_t t = rows_[static_cast<std::size_t>(r)].through.load(std::memory_order_acquire);
    if (after(through, t)) through = t;
  }
  std::uint32_t call = folded_.load(std::memory_order_relaxed);
  while (after(through, call)) {
    ++call;
    bool complete = true;
    std::int64_t first = 0;
    std::int64_t lastTime = 0;
    int lastRank = 0;
    for (int r = 0; r < nranks_ && complete; ++r) {
      const Cell& c = cell(r, call);
      if (c.call.load(std::memory_order_relaxed) != call) {
        complete = false;  // rank r skipped this call: not counted
        break;
      }
      const std::int64_t v = c.ns.load(std::memory_order_relaxed);
      if (r == 0 || v < first) first = v;
      if (r == 0 || v > lastTime) {  // ties: the lowest rank
        lastTime = v;
        lastRank = r;
      }
    }
    if (!complete) continue;
    for (int r = 0; r < nranks_; ++r) {
      const std::int64_t late = cell(r, call).ns.load(std::memory_order_relaxed) - first;
      Totals& tot = totals_[static_cast<std::size_t>(r)];
      tot.lateness += late;
      tot.maxLateness = std::max(tot.maxLateness, late);
    }
    ++totals_[static_cast<std::size_t>(lastRank)].last;
    ++calls_;
  }
  folded_.store(call, std::memory_order_release);  // after the reads above: the ranks may reuse the cells
}

void ArrivalLog::reset(std::uint32_t nextCall) {
  const std::lock_guard lock(foldMutex_);
  const std::size_t cells = static_cast<std::size_t>(window_) * static_cast<std::size_t>(nranks_);
  for (std::size_t i = 0; i < cells; ++i) cells_[i].call.store(0, std::memory_order_relaxed);
  for (int r = 0; r < nranks_; ++r) {
    rows_[static_cast<std::size_t>(r)].through.store(nextCall - 1, std::memory_order_relaxed);
    rows_[static_cast<std::size_t>(r)].seenFolded.store(nextCall - 1, std::memory_order_relaxed);
    totals_[static_cast<std::size_t>(r)] = Totals{};
  }
  calls_ = 0;
  folded_.store(nextCall - 1, std::memory_order_relaxed);
  incomplete_.store(false, std::memory_order_release);
}

ArrivalStats ArrivalLog::stats() const {
  const std::lock_guard lock(foldMutex_);
  foldLocked();
  ArrivalStats out;
  out.calls = calls_;
  out.incomplete = incomplete_.load(std::memory_order_acquire);
  out.ranks.resize(static_cast<std::size_t>(nranks_));
  for (int r = 0; r < nranks_; ++r) {
    const Totals& tot = totals_[static_cast<std::size_t>(r)];
    RankArrivals& a = out.ranks[static_cast<std::size_t>(r)];
    a.calls = out.calls;
    a.totalLateness = std::chrono::nanoseconds(tot.lateness);
    a.maxLateness = std::chrono::nanoseconds(tot.maxLateness);
    a.lastCount = tot.last;
  }
  return out;
}

}  // namespace cclab::host
