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
#include "sim/analytic.h"

namespace cclab::sim {

Micros ringAllReduce(int p, Bytes chunkBytes, std::int64_t rounds, const CostParams& k) {
  const double cb = static_cast<double>(chunkBytes);
  if (p == 1) return cb * k.delta;
  const double steps = p - 1;
  return 2 * steps * static_cast<double>(rounds) * k.alpha + 2 * steps * cb * k.beta + steps * cb * k.gamma;
}

Micros ringReduceScatter(int p, Bytes chunkBytes, std::int64_t rounds, const CostParams& k) {
  const double cb = static_cast<double>(chunkBytes);
  if (p == 1) return cb * k.delta;
  const double steps = p - 1;
  return steps * static_cast<double>(rounds) * k.alpha + steps * cb * k.beta + steps * cb * k.gamma;
}

Micros ringAllGather(int p, Bytes chunkBytes, std::int64_t rounds, const CostParams& k) {
  const double cb = static_cast<double>(chunkBytes);
  const double steps = p - 1;
  return steps * static_cast<double>(rounds) * k.alpha + steps * cb * k.beta + cb * k.delta;
}

}  // namespace cclab::sim
