// Pipelined chain broadcast (NCCL's ring broadcast): root -> root+1 -> ... -> root-1. Each rank
// receives a slice and forwards it while the next slice arrives. One phase.
//
// Cost: (p-1 + S-1)(α + n/S·β) with S slices; for large n it tends to nβ.
#include "collectives/plan/builder.h"

namespace cclab::plan {

Plan broadcastChain(int nranks, std::int64_t count, int root) {
  Plan plan = build::emptyPlan(Collective::Broadcast, Algorithm::Chain, nranks, count, root);
  const int p = nranks;
  for (int r = 0; r < p; ++r) {
    build::Ops ops(plan, r);
    const int pos = build::mod(r - root, p);  // place in the chain
    const int next = build::mod(r + 1, p);
    if (pos == 0) {
      if (p > 1) ops.send(next, build::in(0, count), 0);
      ops.copy(build::in(0, count), build::out(0, count), 0);
      continue;
    }
    ops.recv(build::mod(r - 1, p), build::out(0, count), 0);
    if (pos < p - 1) ops.send(next, build::out(0, count), 0);
  }
  return plan;
}

}  // namespace cclab::plan
