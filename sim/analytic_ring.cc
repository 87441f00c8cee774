// Ring family (allreduce, reduce-scatter, allgather).
//
// Cost of the schedule in collectives/plan/allreduce_ring.cc with R slice rounds per chunk of c bytes
// (Thakur, Rabenseifner & Gropp 2005; Patarasuk & Yuan 2009 for the bandwidth optimum):
//   allreduce:      2(p-1)·R·α + 2(p-1)·c·β + (p-1)·c·γ,   c = n/p  (= 2(p-1)/p·nβ: the lower bound)
//   reduce-scatter: (p-1)·R·α + (p-1)·c·β + (p-1)·c·γ,     c = the per-rank output
//   allgather:      (p-1)·R·α + (p-1)·c·β + c·δ            (the own chunk is copied locally)
// Slice-major execution (plan.h) runs slice round s through all ring steps before round s+1 starts,
// so slicing multiplies the latency term by R and leaves the bandwidth term alone. Exact when every
// chunk has the same size; p = 1 is a local copy, n·δ.
// Where the ring's edges differ (k.chainBeta >= 0: α and chainBeta are the means along the ring, β the
// busiest resource's share) the time is the longer of the critical chain (the forms above at the
// means) and the busiest resource's occupancy (its (p-1) or 2(p-1) chunks at β): a rank runs ahead of
// a slow edge and the slow edge's queue never empties, so its latency hides behind its bytes, which a
// per-step lockstep (every step at the slowest edge's α and β) counts in full. Every edge alike:
// chainBeta = β and the chain is the longer, the forms above exactly.
#include "sim/analytic.h"

#include <algorithm>

namespace cclab::sim {
namespace {

// The chain at the means and the bottleneck's occupancy: `hops` chunk transfers per rank.
Micros ringTime(double hops, double cb, std::int64_t rounds, double computeBytes, const CostParams& k) {
  const double chainBeta = k.chainBeta >= 0 ? k.chainBeta : k.beta;
  const Micros chain = hops * static_cast<double>(rounds) * k.alpha + hops * cb * chainBeta + computeBytes;
  return std::max(chain, hops * cb * k.beta);
}

}  // namespace

Micros ringAllReduce(int p, Bytes chunkBytes, std::int64_t rounds, const CostParams& k) {
  const double cb = static_cast<double>(chunkBytes);
  if (p == 1) return cb * k.delta;
  const double steps = p - 1;
  return ringTime(2 * steps, cb, rounds, steps * cb * k.gamma, k);
}

Micros ringReduceScatter(int p, Bytes chunkBytes, std::int64_t rounds, const CostParams& k) {
  const double cb = static_cast<double>(chunkBytes);
  if (p == 1) return cb * k.delta;
  const double steps = p - 1;
  return ringTime(steps, cb, rounds, steps * cb * k.gamma, k);
}

Micros ringAllGather(int p, Bytes chunkBytes, std::int64_t rounds, const CostParams& k) {
  const double cb = static_cast<double>(chunkBytes);
  const double steps = p - 1;
  return ringTime(steps, cb, rounds, cb * k.delta, k);
}

}  // namespace cclab::sim
