// One straggler vocabulary for every room: a rank that starts late, computes slower, or sends over a
// slower link. The benchmarks inject `startDelay` (the rank arrives late at every collective), the
// trainer `computeFactor` (its forward/backward takes that many times longer), the simulator's replay
// all three (`linkFactor` divides the bandwidth of the rank's outgoing links).
//
// One flag syntax, documented once (docs/design.md, "Stragglers"):
//   RANK:KEY=VALUE[,KEY=VALUE...]   keys: delay (a time: 100us, 2ms, 1s; bare number = µs),
//                                         compute (factor >= 1), link (factor >= 1)
//   e.g. --straggler 3:delay=100us   --straggler 1:compute=1.4   --straggler 2:delay=1ms,link=2
// Old spellings stay accepted: `RANK:NUMBER` means what the tool always meant by it (bench: a delay in
// µs, trainer: a compute factor, sim: a slowdown of compute and link), chosen by `BareNumber`.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace cclab {

struct Straggler {
  int rank = -1;                          // -1: none
  std::chrono::nanoseconds startDelay{0};  // arrives this late at every collective / step
  double computeFactor = 1.0;             // compute takes this many times longer (>= 1)
  double linkFactor = 1.0;                // its links run this many times slower (>= 1)

  [[nodiscard]] bool active() const {
    return rank >= 0 && (startDelay.count() > 0 || computeFactor != 1.0 || linkFactor != 1.0);
  }
};

// What a bare `RANK:NUMBER` means for the tool that parses it (its historical spelling).
enum class BareNumber { DelayMicroseconds, ComputeFactor, ComputeAndLinkFactor };

// Longest start delay accepted: a day-long delay is a typo, not an experiment.
inline constexpr std::chrono::seconds kMaxStragglerDelay{3600};
// Largest slowdown factor accepted.
inline constexpr double kMaxStragglerFactor = 1000.0;

// Parses the syntax above; "none" and "" give an inactive Straggler. Throws InvalidArgument with a
// one-line message naming the bad part (rank not a whole number >= 0, unknown key, factor < 1 or not
// finite, delay negative or over kMaxStragglerDelay).
Straggler parseStraggler(std::string_view text, BareNumber bare);

// "3:delay=100us", "1:compute=1.4", "2:delay=1ms,link=2", or "none": parseStraggler reads it back.
std::string format(const Straggler& s);

}  // namespace cclab
