// Pipelined chain reduce towards root: root+1 -> root+2 -> ... -> root. Each rank reduces the
// incoming slice with its input and forwards it. Non-root ranks keep partial sums in scratch (their
// output buffer is only meaningful at the root, as in NCCL). One phase.
//
// Cost: (p-1 + S-1)(α + n/S·β) + nγ-per-rank.
#include "collectives/plan/builder.h"

namespace cclab::plan {

Plan reduceChain(int nranks, std::int64_t count, int root) {
  Plan plan = build::emptyPlan(Collective::Reduce, Algorithm::Chain, nranks, count, root);
  const int p = nranks;
  plan.scratchCount = p > 2 ? count : 0;
  for (int r = 0; r < p; ++r) {
    build::Ops ops(plan, r);
    const int pos = build::mod(r - root - 1, p);  // 0 starts the chain, p-1 is the root
    const Range mine = build::in(0, count);
    if (p == 1) {
      ops.copy(mine, build::out(0, count), 0);
    } else if (pos == 0) {
      ops.send(build::mod(r + 1, p), mine, 0);
    } else if (pos == p - 1) {
      ops.recvReduce(build::mod(r - 1, p), mine, build::out(0, count), 0);
    } else {
      ops.recvReduce(build::mod(r - 1, p), mine, build::scratch(0, count), 0);
      ops.send(build::mod(r + 1, p), build::scratch(0, count), 0);
    }
  }
  return plan;
}

}  // namespace cclab::plan
