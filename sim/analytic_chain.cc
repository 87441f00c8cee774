// Pipelined chain broadcast and reduce (collectives/plan/broadcast_chain.cc, reduce_chain.cc).
//
// A chain of p ranks with R slices of b = n/R bytes is a tandem line: each slice crosses p-1 hops,
// and after the first slice the line delivers one slice per bottleneck service time (the standard
// pipelined-chain bound, e.g. Pješivac-Grbović et al. 2007 with α as pipelined latency, not occupancy):
//   broadcast: max((p-1)(α + bβ) + (R-1)·max(bβ, bδ),  R·bδ)      (the root copies each slice after sending it)
//   reduce:    (p-1)(α + bβ + bγ) + (R-1)·max(bβ, bγ)
// For large n both tend to nβ (or nγ if reducing is slower than the wire). p = 1 is a copy, n·δ.
#include <algorithm>

#include "sim/analytic.h"

namespace cclab::sim {

Micros chainBroadcast(int p, Bytes n, std::int64_t rounds, const CostParams& k) {
  const double nb = static_cast<double>(n);
  if (p == 1) return nb * k.delta;
  const double R = static_cast<double>(rounds), b = nb / R;
  const double last = (p - 1) * (k.alpha + b * k.beta) + (R - 1) * std::max(b * k.beta, b * k.delta);
  return std::max(last, R * b * k.delta);
}

Micros chainReduce(int p, Bytes n, std::int64_t rounds, const CostParams& k) {
  const double nb = static_cast<double>(n);
  if (p == 1) return nb * k.delta;
  const double R = static_cast<double>(rounds), b = nb / R;
  return (p - 1) * (k.alpha + b * k.beta + b * k.gamma) + (R - 1) * std::max(b * k.beta, b * k.gamma);
}

}  // namespace cclab::sim
