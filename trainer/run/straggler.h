// Straggler injection: `--straggler RANK:compute=FACTOR` (cclab::Straggler, collectives/core/straggler.h;
// the old `RANK:FACTOR` still means the same) makes that worker's compute FACTOR times slower (1.4 =
// 40% slower). After the forward pass and after each layer's backward the worker calls pace(), which
// delays it by (FACTOR - 1) x the compute it just measured, so the slowdown is spread over the step as
// a slower device's would be (and buckets start late, as they would).
//
// The delay is exact on average: pace() sleeps for all but the last kSpinTailNs of what it owes and
// spins for the rest, and any overshoot (a sleep that woke late, a preemption) is carried as a debt
// that the next calls pay back by delaying less. The throttle keeps its own accounting (measured
// compute, injected delay), so the realised factor (measured + injected) / measured is reported, not
// assumed.
#pragma once

#include <cstdint>

#include "trainer/run/clock.h"

namespace cclab::trainer {

class ComputeThrottle {
 public:
  // Owed time below this is spun, not slept (a sleep overshoots by ~50-100 us on Linux).
  static constexpr std::int64_t kSpinTailNs = 200'000;

  explicit ComputeThrottle(double factor = 1.0) : factor_(factor) {}
  // Counts now - sinceNs as measured compute and delays (factor - 1) x that, less any overshoot of
  // earlier calls. Returns the time this call delayed (0 without a straggler).
  std::int64_t pace(const RunClock& clock, std::int64_t sinceNs);
  [[nodiscard]] bool active() const { return factor_ != 1.0; }
  [[nodiscard]] double factor() const { return factor_; }
  [[nodiscard]] std::int64_t measuredNs() const { return measuredNs_; }  // compute paced so far
  [[nodiscard]] std::int64_t injectedNs() const { return injectedNs_; }  // delay injected so far
  [[nodiscard]] std::int64_t spinCpuNs() const { return spinCpuNs_; }    // CPU time pace() itself used
  // (measured + injected) / measured; 1 before any compute or without a straggler.
  [[nodiscard]] double realisedFactor() const;

 private:
  double factor_;
  std::int64_t measuredNs_ = 0;
  std::int64_t injectedNs_ = 0;
  std::int64_t spinCpuNs_ = 0;
  double debtNs_ = 0.0;  // owed but not yet delayed (< 0: delayed too much, paid back later)
};

}  // namespace cclab::trainer
