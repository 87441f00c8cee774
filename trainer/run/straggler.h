// Straggler injection: `--straggler RANK:FACTOR` makes that worker's compute FACTOR times slower
// (1.4 = 40% slower) by sleeping (FACTOR - 1) x the compute time it just measured, after the forward
// pass and after each layer's backward, so the slowdown is spread over the step as a slower device's
// would be (and buckets start late, as they would).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trainer/run/clock.h"

namespace cclab::trainer {

struct StragglerSpec {
  int rank = -1;  // -1: no straggler
  double factor = 1.0;
  [[nodiscard]] bool active() const { return rank >= 0 && factor != 1.0; }
};

// "1:1.4" -> {1, 1.4}; throws InvalidArgument (factor must be >= 1, rank >= 0).
StragglerSpec parseStraggler(std::string_view s);
std::string format(const StragglerSpec& s);  // "1:1.4" or "none"

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
