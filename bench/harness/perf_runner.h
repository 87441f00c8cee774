// The sweep itself: for every type x op x size, time the collective out of place and in place on one
// communicator and check it against the exact reference, as nccl-tests' TimeTest/BenchTime do:
//   check on: write inputs; warm up (-w); time -n iterations of -m group calls, synchronizing once
//   at the end (as nccl-tests: calls are enqueued back to back); then write inputs again, run once,
//   and count #wrong.
// -t N > 1 (nccl-tests' -t N -g 1): each rank has its own thread making per-rank calls, as a program
// with a thread per rank would; -t 1 (default): one thread drives every rank with group calls.
// Differences from nccl-tests: warm-up runs at every size (not only at the smallest and largest),
// and buffers are not shifted between iterations.
// Arrival times (arrival_report.h) are reset after each warm-up and read after each timed loop, so
// the report covers the timed calls only.
#pragma once

#include <cstdint>
#include <memory>

#include "bench/harness/arrival_report.h"
#include "bench/harness/harness_options.h"
#include "bench/harness/rank_allocations.h"
#include "bench/harness/reference_check.h"
#include "bench/report/report_types.h"

namespace cclab::bench {

class PerfRunner {
 public:
  PerfRunner(Communicator& comm, plan::Collective collective, const HarnessOptions& options);
  // Prints each row to `table` as soon as it is measured and adds it to `log`. Throws what the
  // communicator throws (TimeoutError, ...): rows measured until then stay in `log`.
  void run(const TablePrinter& table, ResultLog& log);
  // Arrivals at the timed calls measured so far.
  [[nodiscard]] const ArrivalReport& arrivals() const { return arrivals_; }

 private:
  [[nodiscard]] ResultRow measureSize(const CollectiveArgs& args, std::int64_t bytes);
  [[nodiscard]] Measurement measure(const CollectiveArgs& args, const CollectiveShape& shape, bool inPlace);
  [[nodiscard]] std::vector<RankBuffers> groupBuffers(const CollectiveArgs& args, const CollectiveShape& shape,
                                                    bool inPlace) const;
  // Runs `warmup` untimed then `iters` timed iterations; returns seconds per collective.
  double runCalls(const CollectiveArgs& args, const CollectiveShape& shape, bool inPlace, int warmup, int iters);
  // -t N > 1: one thread per rank, each making `warmup` then `calls` per-rank calls, starting its
  // clock after a barrier that follows every thread's warm-up (and resets the arrival report); returns
  // the threads' seconds combined by -a (average_mode.h).
  // A thread that throws leaves the barrier (no one waits for it) and its exception is rethrown.
  double runOnThreads(const CollectiveArgs& args, const std::vector<RankBuffers>& buffers, int warmup, int calls);

  // The run's memory, sized for the largest size: every rank's buffers and host staging.
  struct RunMemory {
    RankAllocations ranks;
    HostStaging staging;
  };

  Communicator& comm_;
  plan::Collective collective_;
  const HarnessOptions& options_;
  CollectiveOptions callOptions_;
  std::unique_ptr<RunMemory> memory_;
  std::uint64_t seed_ = 1;
  ArrivalReport arrivals_;
};

}  // namespace cclab::bench
