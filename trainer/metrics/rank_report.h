// Per-rank figures and the straggler detector (docs/trainer.md, "Stragglers named").
// For each rank: mean compute, exposed communication and peer wait per step, the straggler
// throttle's realised factor, and (sync) how often the rank arrived last at a bucket's allreduce and
// how much waiting that cost the other ranks.
//
// Rule: a rank is named a straggler when, in a sync run with >= 2 workers, it arrived last at more
// than kStragglerLastShare of the allreduces AND its slowdown (its mean device compute per step / the
// median of the other ranks'; device compute = the worker thread's CPU time + injected delay,
// StepRecord::deviceComputeNs) is at least kStragglerMinSlowdown. Both must hold, so scheduling noise
// (which makes some rank last, but not one whose compute is 50% slower) names nobody.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/metrics/records.h"

namespace cclab::trainer {

inline constexpr double kStragglerLastShare = 0.5;
// 1.5, not less: on this project's shared 2-core VM two identical workers measured up to 1.41x apart
// in CPU time (cache and core sharing with other processes), so a smaller margin names noise.
inline constexpr double kStragglerMinSlowdown = 1.5;

struct RankFigures {
  int rank = 0;
  std::int64_t steps = 0;
  double computeUs = 0.0;      // means per step
  double exposedCommUs = 0.0;
  double waitUs = 0.0;
  double realisedFactor = 1.0;  // (throttled + injected) / throttled compute; 1 without a straggler
  double deviceComputeUs = 0.0;  // mean per step of StepRecord::deviceComputeNs (computeNs when 0)
  double slowdown = 1.0;        // deviceComputeUs / the median of the other ranks'
  std::int64_t lastArrivals = 0;  // allreduces this rank arrived at last (sync)
  double lastShare = 0.0;         // lastArrivals / allreduces
  double causedWaitUs = 0.0;      // total time the other ranks waited for this rank at allreduces
  bool straggler = false;
};

struct RankReport {
  std::vector<RankFigures> ranks;
  std::int64_t allreduces = 0;  // bucket allreduces seen by >= 2 ranks
  bool detectable = false;      // sync with >= 2 workers
  [[nodiscard]] std::vector<int> stragglers() const;
};

RankReport analyzeRanks(const RunResult& run, int workers);

// One bucket allreduce of one step: the ranks in the order they arrived (first to last).
struct ArrivalOrder {
  int epoch = 0;
  std::int64_t step = 0;
  int bucket = 0;
  std::vector<int> order;
};
// Every allreduce in run.arrivals, in (epoch, step, bucket) order.
std::vector<ArrivalOrder> arrivalOrders(const RunResult& run);
// The rule above, in words (printed with the verdict).
std::string stragglerRule();

}  // namespace cclab::trainer
