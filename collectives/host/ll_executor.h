// LL executor: runs a Plan whose messages are all small over flagged lines (ll_lines.h), one thread per
// rank, as the slot executor (host_executor.h) runs any plan: an LL transport of the executor core
// (plan::PlanRunner, collectives/plan/plan_runner.h).
//
// A send copies its data into the connection's ring (the sender never waits for the reader to read
// its buffer, only, rarely, for room in the ring); a receive polls the units of the next message and
// copies or reduces from them. Ops run whole, in each rank's op order (channels one after the other):
// Send, Recv, RecvReduce, Copy and ReduceAll (every peer's message folded in rank order, so all ranks
// reduce the same element to the same bits).
// A plan fits when the messages one call sends on any connection fit in its ring (fits()); then no
// call can deadlock on a full ring (a sender only waits for the reader to finish an earlier call).
//
// Waits and failures as in the slot executor (wait.h): every wait spins for `spin` (the slot executor's:
// 50 µs with a core per rank, none beyond), yields for 2 ms, then sleeps on a futex; after the timeout it throws a one-line TimeoutError naming the ranks that
// never arrived at the call and the peer it waited for; the others then abort (no hang) and every
// later run() throws. A straggler's start delay is honoured and bounded by the same timeout.
// Arrivals are recorded in an ArrivalLog of this executor's calls (arrival_log.h).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "collectives/host/executor_base.h"
#include "collectives/host/arrival_log.h"
#include "collectives/host/host_executor.h"
#include "collectives/host/ll_lines.h"
#include "collectives/host/ll_transport.h"
#include "collectives/host/wait.h"
#include "collectives/plan/plan.h"
#include "collectives/plan/plan_runner.h"

namespace cclab::host {

// Most channels a plan may have to run here (connections are kept per channel).
inline constexpr int kLlMaxChannels = 8;
// Ring size per connection: 512 lines (32 KiB, 16 KiB of data), less when nranks^2 connections of that
// size would exceed kLlRingBudgetBytes per channel (p > 32), never below kLlMinRingLines.
inline constexpr std::int64_t kLlMaxRingLines = 512;
inline constexpr std::int64_t kLlMinRingLines = 16;
inline constexpr std::size_t kLlRingBudgetBytes = std::size_t{64} << 20;
inline std::int64_t llDefaultRingLines(int nranks) {
  return std::clamp(llAffordableLines(nranks, kLlRingBudgetBytes), kLlMinRingLines, kLlMaxRingLines);
}

struct LlConfig {
  std::int64_t ringLines = 0;                     // lines per connection (a power of two); 0: llDefaultRingLines
  std::uint32_t flagPeriod = kLlMaxFlagPeriod;    // laps before a flag repeats (>= 2; tests use 2)
};

class LlExecutor : public ExecutorBase {
 public:
  LlExecutor(int nranks, std::chrono::nanoseconds spin, LlConfig config = {});
  ~LlExecutor() override;

  [[nodiscard]] std::int64_t ringLines() const { return ringLines_; }
  // Whether the (valid) `plan` can run here with elements of `elemSize` bytes: at most kLlMaxChannels
  // channels, and on every connection the lines one call sends fit in the ring (llPlanFits).
  [[nodiscard]] bool fits(const plan::Plan& plan, std::size_t elemSize) const {
    return plan.nranks == nranks_ && plan.nchannels <= kLlMaxChannels && llPlanFits(plan, elemSize, ringLines_, true);
  }
  // Runs rank `rank`'s ops of `plan` (which must fit) on the calling thread; options.sliceElems is
  // ignored (ops run whole). One thread per rank at a time; every rank runs the same sequence of plans.
  void run(int rank, const plan::Plan& plan, const RankMemory& memory, const RunOptions& options);
  // Runs the ops of several ranks (ranks[i] on memories[i]) of `plan` on the calling thread,
  // cooperatively (ll_multi_run.cc): each rank's ops in order, advancing whichever rank can move and
  // waiting only when none can (busy for `spin`, then yielding, then briefly asleep). For more ranks
  // than cores: a thread per core, each running a share of the ranks, instead of a thread per rank
  // that must be scheduled and descheduled once per call. No start delay (options.startDelay is
  // refused); waits, timeouts and failures as run(); every rank appears in one call's shares once.
  void runRanks(std::span<const int> ranks, const plan::Plan& plan, std::span<const RankMemory> memories,
                const RunOptions& options, std::chrono::nanoseconds spin);

  // Gathered one-shot allreduce, for a group call whose driver runs rank 0 (ll_executor.cc): whether
  // `plan` is a non-empty one-channel one-shot allreduce (every rank sends its input to every peer, folds all p
  // inputs in rank order, copies the fold to its output), which rank 0 can then complete for everyone:
  // gatherSend(r) on every rank r > 0 sends only its input line(s) to rank 0; gatherFold on rank 0
  // receives them, folds in rank order (ReduceAll's bits) and writes the result to every rank's output.
  // Once gatherFold returns, every peer's send is complete and a peer touches nothing of the call after
  // its send (rank 0 records the peers' arrivals): the call is over without a done word from the peers.
  // Rank 0 reads every message before it returns, so every ring (r, 0) is empty at the next call.
  // Waits, timeouts, the start delay and failures as run(); a peer never waits (its ring has room).
  [[nodiscard]] static bool gathers(const plan::Plan& plan);
  void gatherSend(int rank, const plan::Plan& plan, const RankMemory& memory, const RunOptions& options);
  // outputs[q]: rank q's output buffer (rank 0's included).
  void gatherFold(const plan::Plan& plan, const RankMemory& memory, std::span<std::byte* const> outputs,
                  const RunOptions& options);

  [[nodiscard]] std::uint64_t progress() const;  // grows with every wait that outlasts the spin
  // Between calls only (as ArrivalLog): both first put the arrivals ranks still hold back into the log.
  [[nodiscard]] ArrivalStats arrivalStats() const;
  void resetArrivals();

 private:
  struct alignas(128) RankState {  // 128: CPUs fetch lines in pairs, and the ranks write theirs every call
    std::atomic<std::uint32_t> calls{0};      // calls started (after the start delay)
    std::atomic<std::uint64_t> progress{0};   // waits that outlasted the spin (written by the rank only)
    std::vector<std::byte> acc, incoming;     // gatherFold's accumulator, received messages
    plan::RunnerState<plan::NoLaneData> runner;  // the runner's state (plan_runner.h), kept between calls
    std::vector<LlLink<WaitWord>*> sent, read;  // connections whose waiters may need a wake-up
    std::vector<std::pair<std::uint32_t, Clock::time_point>> unrecorded;  // arrivals not in the log yet
    // Counted only by waits that outlast the spin: a call that keeps moving without them ends in µs, and
    // the watchdog's reads then find the counters where they were (no cache line moves per call).
    void bumpProgress() { progress.store(progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
  };
  // Most arrivals a rank holds back from the log (far below its window of 2 x nranks + 64 calls).
  static constexpr std::size_t kMaxUnrecorded = 16;
  class RankRun;
  class MultiRun;

  LlConnection& connection(int channel, int from, int to);
  void wakeWaiters() override;  // every connection
  [[nodiscard]] std::uint32_t started(int rank) const override {
    return ranks_[static_cast<std::size_t>(rank)].calls.load(std::memory_order_acquire);
  }
  // Holds rank st's arrival at `call` back from the log (its shared counters), up to kMaxUnrecorded.
  void holdArrival(RankState& st, std::uint32_t call, Clock::time_point when) {
    st.unrecorded.push_back({call, when});
    if (st.unrecorded.size() >= kMaxUnrecorded) recordArrivals(st);
  }
  void recordArrivals(RankState& st) const;  // moves st.unrecorded into the log
  // Waits (waitUntil) until ready() holds, `word` the one a waker of this wait bumps; counts a wait
  // that outlasted `spin` in st's progress. ready() reads the units, not `word`: once the waiter counts
  // itself a sleeper, a fence orders that count before ready()'s reads, pairing with flushWakes()'
  // fence (one of the two sees the other).
  template <class Ready>
  WaitResult waitFor(WaitWord& word, Ready ready, RankState& st, std::chrono::nanoseconds timeout, std::chrono::nanoseconds spin,
                     std::chrono::nanoseconds maxSleep = kMaxSleep) {
    const auto start = Clock::now();
    const auto check = [&](std::uint32_t) {
      if (word.sleepers.load(std::memory_order_relaxed) != 0) std::atomic_thread_fence(std::memory_order_seq_cst);
      return ready();
    };
    const WaitResult r = waitUntil(word, check, abortFlag(), start + timeout, spin, maxSleep);
    if (r == WaitResult::Ready && Clock::now() >= start + spin) st.bumpProgress();  // a wait that outlasted the spin
    return r;
  }

  std::chrono::nanoseconds spin_;
  std::int64_t ringLines_;
  std::uint32_t flagPeriod_;
  std::vector<std::atomic<LlConnection*>> connections_;  // [(channel * p + from) * p + to], made on first use
  std::unique_ptr<RankState[]> ranks_;
};

}  // namespace cclab::host
