// Straggler injection: `--straggler RANK:compute=FACTOR` (cclab::Straggler, collectives/core/straggler.h;
// the old `RANK:FACTOR` still means the same) makes that worker's compute FACTOR times slower (1.4 =
// 40% slower) by sleeping (FACTOR - 1) x the compute time it just measured, after the forward pass and
// after each layer's backward, so the slowdown is spread over the step as a slower device's would be
// (and buckets start late, as they would).
#pragma once

#include <cstdint>

#include "trainer/run/clock.h"

namespace cclab::trainer {

class ComputeThrottle {
 public:
  explicit ComputeThrottle(double factor = 1.0) : factor_(factor) {}
  // Sleeps (factor - 1) x (now - sinceNs) and returns the time this call delayed.
  std::int64_t pace(const RunClock& clock, std::int64_t sinceNs);
  [[nodiscard]] bool active() const { return factor_ != 1.0; }

 private:
  double factor_;
};

}  // namespace cclab::trainer
