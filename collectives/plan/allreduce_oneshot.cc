// One-shot allreduce, for small messages: every rank sends its whole input to every other rank and
// reduces all p vectors in one pass (ReduceAll, in rank order, so every rank gets the same bits).
// One step: α + (p-1)·nβ per rank, p·n read per rank; only worth it while α dominates.
//
// The result goes to scratch first and is copied to the output after: in place, the output is the
// input the peers are still reading, and a rank may not overwrite it before they have.
#include "collectives/plan/builder.h"

namespace cclab::plan {

Plan allReduceOneShot(int nranks, std::int64_t count) {
  Plan plan = build::emptyPlan(Collective::AllReduce, Algorithm::OneShot, nranks, count);
  plan.scratchCount = nranks > 1 ? count : 0;
  for (int r = 0; r < nranks; ++r) {
    build::Ops ops(plan, r);
    if (nranks == 1) {
      ops.copy(build::in(0, count), build::out(0, count), 0);
      continue;
    }
    for (int q = 1; q < nranks; ++q) ops.send((r + q) % nranks, build::in(0, count), 0);
    ops.reduceAll(build::in(0, count), build::scratch(0, count), 0);
    ops.copy(build::scratch(0, count), build::out(0, count), 0);
  }
  return plan;
}

}  // namespace cclab::plan
