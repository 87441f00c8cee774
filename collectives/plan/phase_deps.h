// Phase dependencies between the channels of a rank (plan.h, Plan::deps), as the consumers that run
// channels concurrently check them: a channel about to run its first op of phase p asks of(channel, p)
// and waits until, for each dep, channel afterChannel is done or stands at an op of a phase after
// afterPhase (finishedThrough). Consumers that walk a rank's ops one after the other use
// sequentialOps() instead, which needs no check.
#pragma once

#include <span>
#include <vector>

#include "collectives/plan/plan.h"

namespace cclab::plan {

class PhaseGates {
 public:
  PhaseGates() = default;
  explicit PhaseGates(std::span<const PhaseDep> deps);
  [[nodiscard]] bool empty() const { return sorted_.empty(); }
  // The deps channel `channel` must see met before it runs its first op of phase `phase`.
  [[nodiscard]] std::span<const PhaseDep> of(int channel, int phase) const;

 private:
  std::vector<PhaseDep> sorted_;  // by (channel, phase)
};

// Has a channel finished every op of phases <= q, given where its walker (slice_walk.h) stands: done,
// or at an op of a later phase? Phases never decrease along a channel's ops.
template <class Walker>
bool finishedThrough(const Walker& walker, int q) {
  return walker.done() || walker.current().phase > q;
}

// Are the deps of channel `channel`'s phase `phase` met on this rank? walkerOf(afterChannel) gives
// that channel's walker on the rank, or nullptr where it has no ops (met at once).
template <class WalkerOf>
bool gatesMet(const PhaseGates& gates, int channel, int phase, WalkerOf walkerOf) {
  for (const PhaseDep& d : gates.of(channel, phase)) {
    const auto* walker = walkerOf(d.afterChannel);
    if (walker && !finishedThrough(*walker, d.afterPhase)) return false;
  }
  return true;
}

}  // namespace cclab::plan
