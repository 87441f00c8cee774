// ArrivalLog (arrival_log.h): per-call arrivals in a ring of slots, folded into per-rank totals by
// each call's last arriver.
#include "collectives/host/arrival_log.h"

#include <algorithm>

#include "collectives/core/errors.h"

namespace cclab::host {
namespace {

constexpr std::uint32_t kExtraWindow = 64;

// Whether call number `a` comes after `b` (call numbers wrap around after 2^32 calls).
bool after(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) > 0; }

void raiseTo(std::atomic<std::int64_t>& value, std::int64_t candidate) {
  std::int64_t seen = value.load(std::memory_order_relaxed);
  while (candidate > seen && !value.compare_exchange_weak(seen, candidate, std::memory_order_relaxed)) {
  }
}

}  // namespace

ArrivalLog::ArrivalLog(int nranks)
    : nranks_(nranks), window_(2 * static_cast<std::uint32_t>(nranks) + kExtraWindow), epoch_(Clock::now()) {
  if (nranks < 1) throw InvalidArgument("ArrivalLog: nranks must be >= 1");
  slots_ = std::make_unique<Slot[]>(window_);
  const std::size_t cells = static_cast<std::size_t>(window_) * static_cast<std::size_t>(nranks);
  times_ = std::make_unique<std::atomic<std::int64_t>[]>(cells);
  totals_ = std::make_unique<Totals[]>(static_cast<std::size_t>(nranks));
  reset(1);
}

void ArrivalLog::record(int rank, std::uint32_t call, Clock::time_point when) {
  if (incomplete_.load(std::memory_order_relaxed)) return;
  const std::uint32_t slot = call % window_;
  Slot& s = slots_[slot];
  const std::uint32_t expected = s.call.load(std::memory_order_acquire);
  if (expected != call) {
    // A later call than the slot expects: the earlier one is still open, this rank ran a window ahead.
    // An earlier one: a call started before the last reset, not counted.
    if (after(call, expected)) incomplete_.store(true, std::memory_order_relaxed);
    return;
  }
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(when - epoch_).count();
  times_[static_cast<std::size_t>(rank) * window_ + slot].store(ns, std::memory_order_relaxed);
  if (s.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<std::uint32_t>(nranks_)) finish(slot, call);
}

void ArrivalLog::finish(std::uint32_t slot, std::uint32_t call) {
  const auto t = [this, slot](int r) -> const std::atomic<std::int64_t>& {
    return times_[static_cast<std::size_t>(r) * window_ + slot];
  };
  std::int64_t first = t(0).load(std::memory_order_relaxed);
  std::int64_t lastTime = first;
  int lastRank = 0;
  for (int r = 1; r < nranks_; ++r) {
    const std::int64_t v = t(r).load(std::memory_order_relaxed);
    first = std::min(first, v);
    if (v > lastTime) {
      lastTime = v;
      lastRank = r;
    }
  }
  for (int r = 0; r < nranks_; ++r) {
    const std::int64_t late = t(r).load(std::memory_order_relaxed) - first;
    Totals& tot = totals_[static_cast<std::size_t>(r)];
    tot.lateness.fetch_add(late, std::memory_order_relaxed);
    raiseTo(tot.maxLateness, late);
  }
  totals_[static_cast<std::size_t>(lastRank)].last.fetch_add(1, std::memory_order_relaxed);
  calls_.fetch_add(1, std::memory_order_relaxed);
  Slot& s = slots_[slot];
  s.arrived.store(0, std::memory_order_relaxed);
  s.call.store(call + window_, std::memory_order_release);  // after the reads above: the slot is free
}

void ArrivalLog::reset(std::uint32_t nextCall) {
  for (std::uint32_t s = 0; s < window_; ++s) {
    slots_[s].arrived.store(0, std::memory_order_relaxed);
    // The first call number from nextCall on that maps to slot s.
    slots_[s].call.store(nextCall + (s + window_ - nextCall % window_) % window_, std::memory_order_release);
  }
  for (int r = 0; r < nranks_; ++r) {
    Totals& tot = totals_[static_cast<std::size_t>(r)];
    tot.lateness.store(0, std::memory_order_relaxed);
    tot.maxLateness.store(0, std::memory_order_relaxed);
    tot.last.store(0, std::memory_order_relaxed);
  }
  calls_.store(0, std::memory_order_relaxed);
  incomplete_.store(false, std::memory_order_release);
}

ArrivalStats ArrivalLog::stats() const {
  ArrivalStats out;
  out.calls = calls_.load(std::memory_order_acquire);
  out.incomplete = incomplete_.load(std::memory_order_acquire);
  out.ranks.resize(static_cast<std::size_t>(nranks_));
  for (int r = 0; r < nranks_; ++r) {
    const Totals& tot = totals_[static_cast<std::size_t>(r)];
    RankArrivals& a = out.ranks[static_cast<std::size_t>(r)];
    a.calls = out.calls;
    a.totalLateness = std::chrono::nanoseconds(tot.lateness.load(std::memory_order_relaxed));
    a.maxLateness = std::chrono::nanoseconds(tot.maxLateness.load(std::memory_order_relaxed));
    a.lastCount = tot.last.load(std::memory_order_relaxed);
  }
  return out;
}

}  // namespace cclab::host
