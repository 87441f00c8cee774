// Two-shot allreduce: a reduce-scatter by direct reads (rank r receives chunk r from every rank and
// reduces them in one pass, ReduceAll) then an allgather by direct writes (rank r sends its reduced
// chunk to every rank). Two steps: 2α + 2(p-1)/p·nβ per rank, for small and medium messages.
// One phase: a rank's chunk r is reduced and sent on slice by slice. The sum goes to scratch, then
// to the output: in place, output chunk r is the rank's own operand, which a consumer that folds in
// rank order (the CUDA lowering: a copy of rank 0's value first) must not overwrite before reading.
#include "collectives/plan/builder.h"

namespace cclab::plan {

Plan allReduceTwoShot(int nranks, std::int64_t count) {
  Plan plan = build::emptyPlan(Collective::AllReduce, Algorithm::TwoShot, nranks, count);
  plan.scratchCount = nranks > 1 ? chunkOf(count, nranks, 0).count : 0;
  for (int r = 0; r < nranks; ++r) {
    build::Ops ops(plan, r);
    if (nranks == 1) {
      ops.copy(build::in(0, count), build::out(0, count), 0);
      continue;
    }
    const Chunk mine = chunkOf(count, nranks, r);
    for (int q = 1; q < nranks; ++q) {
      const int peer = (r + q) % nranks;
      const Chunk theirs = chunkOf(count, nranks, peer);
      ops.send(peer, build::in(theirs.offset, theirs.count), 0);
    }
    ops.reduceAll(build::in(mine.offset, mine.count), build::scratch(0, mine.count), 0);
    for (int q = 1; q < nranks; ++q) ops.send((r + q) % nranks, build::scratch(0, mine.count), 0);
    ops.copy(build::scratch(0, mine.count), build::out(mine.offset, mine.count), 0);
    for (int q = 1; q < nranks; ++q) {
      const int peer = (r + nranks - q) % nranks;
      const Chunk theirs = chunkOf(count, nranks, peer);
      ops.recv(peer, build::out(theirs.offset, theirs.count), 0);
    }
  }
  return plan;
}

}  // namespace cclab::plan
