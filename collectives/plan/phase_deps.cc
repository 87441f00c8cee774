#include "collectives/plan/phase_deps.h"

#include <algorithm>
#include <tuple>

namespace cclab::plan {

namespace {
auto key(const PhaseDep& d) { return std::tuple(d.channel, d.phase); }
}  // namespace

PhaseGates::PhaseGates(std::span<const PhaseDep> deps) : sorted_(deps.begin(), deps.end()) {
  std::stable_sort(sorted_.begin(), sorted_.end(), [](const PhaseDep& a, const PhaseDep& b) { return key(a) < key(b); });
}

std::span<const PhaseDep> PhaseGates::of(int channel, int phase) const {
  const PhaseDep probe{channel, phase, 0, 0};
  auto lo = std::lower_bound(sorted_.begin(), sorted_.end(), probe, [](const PhaseDep& a, const PhaseDep& b) { return key(a) < key(b); });
  auto hi = lo;
  while (hi != sorted_.end() && key(*hi) == key(probe)) ++hi;
  return {lo, hi};
}

}  // namespace cclab::plan
