// Recursive doubling allreduce (Thakur, Rabenseifner & Gropp 2005, §4): the latency-optimal
// allreduce for small messages, for any nranks.
//
// The extra ranks of a non-power-of-two p first fold their vector into a partner (fold.h). Then
// for masks 1, 2, ..., q/2 each remaining rank v exchanges its whole vector with v^mask and reduces:
// log2(q) steps, each combining two values that are equal on both partners, so every rank ends with the
// same bits (a (op) b == b (op) a). Partial results alternate between two scratch slots (a rank may
// not overwrite what its partner is still reading); a final copy writes the output, and the folded
// ranks get it last.
//
// Cost (p = q): log2(p)·(α + nβ + nγ); folding adds 2α + 2nβ + nγ. Fewer steps than halving-doubling
// (2·log2 p) but log2(p)·n bytes per rank instead of 2n: for small n only.
#include "collectives/plan/builder.h"
#include "collectives/plan/fold.h"

namespace cclab::plan {

Plan allReduceRecursiveDoubling(int nranks, std::int64_t count) {
  const int p = nranks;
  const Fold fold(p);
  const int steps = fold.log2();
  const int lastPhase = steps + 1;
  Plan plan = build::emptyPlan(Collective::AllReduce, Algorithm::RecursiveDoubling, nranks, count, 0, steps + 2);
  plan.scratchCount = p > 1 ? 2 * count : 0;
  const Range all = build::out(0, count);
  auto slot = [&](int i) { return build::scratch(i * count, count); };
  for (int r = 0; r < p; ++r) {
    build::Ops ops(plan, r);
    if (p == 1) {
      ops.copy(build::in(0, count), all, 0);
      continue;
    }
    if (fold.isExtra(r)) {  // extra rank: fold in, get the result at the end
      ops.send(r - 1, build::in(0, count), 0);
      ops.recv(r - 1, all, lastPhase);
      continue;
    }
    const bool folds = fold.folds(r);
    Range current = build::in(0, count);
    int next = 0;  // the scratch slot the next reduction writes
    if (folds) {
      ops.recvReduce(r + 1, current, slot(1), 0);
      current = slot(1);
    }
    const int v = fold.virtualRank(r);
    for (int k = 0; k < steps; ++k) {
      const int peer = fold.rankOf(v ^ (1 << k));
      ops.send(peer, current, k + 1);
      ops.recvReduce(peer, current, slot(next), k + 1);
      current = slot(next);
      next = 1 - next;
    }
    ops.copy(current, all, lastPhase);
    if (folds) ops.send(r + 1, all, lastPhase);
  }
  return plan;
}

}  // namespace cclab::plan
