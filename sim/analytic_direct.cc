// Direct allreduces for small messages: one-shot and two-shot (collectives/plan/allreduce_oneshot.cc,
// allreduce_twoshot.cc), both built on ReduceAll (one pass over every peer's slice).
//
// One-shot: every rank sends its whole input to the p-1 others and reduces the p vectors, then copies
// the result from scratch to the output. With R slice rounds of b = n/R bytes each round is: the
// sends leave at once (separate links), the last slice arrives α + bβ later, the rank reduces p-1
// received slices ((p-1)·bγ) and copies (bδ), and only then issues the next round's sends:
//   oneshot:  R·α + nβ + (p-1)·nγ + nδ
// Two-shot: rank r receives chunk r (c = n/p bytes) from every rank, reduces them, and sends the
// reduced chunk to every rank; a round is two messages one after the other plus the reduction:
//   twoshot:  2R·α + 2cβ + (p-1)·cγ,   R = slice rounds of one chunk
// Both are exact on the textbook topology (a direct link per pair) when n splits evenly into chunks
// and slices; on a switch the p-1 sends share the rank's port, which replay models and these do not
// (effective_params.h charges the sharing to β). p = 1 is a copy, n·δ.
#include "sim/analytic.h"

namespace cclab::sim {

Micros oneShotAllReduce(int p, Bytes n, std::int64_t rounds, const CostParams& k) {
  const double nb = static_cast<double>(n);
  if (p == 1) return nb * k.delta;
  return static_cast<double>(rounds) * k.alpha + nb * k.beta + (p - 1) * nb * k.gamma + nb * k.delta;
}

Micros twoShotAllReduce(int p, Bytes chunkBytes, std::int64_t rounds, const CostParams& k) {
  const double cb = static_cast<double>(chunkBytes);
  if (p == 1) return cb * k.delta;
  return 2 * static_cast<double>(rounds) * k.alpha + 2 * cb * k.beta + (p - 1) * cb * k.gamma;
}

}  // namespace cclab::sim
