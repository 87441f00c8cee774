// Ring allreduce: a reduce-scatter then an allgather around the ring r -> r+1.
//
// The data is cut into p chunks (chunkOf). Reduce-scatter, steps k = 0..p-2: rank r sends chunk r-k
// (from its input at k = 0, else the partial sum it reduced at step k-1) and receives chunk r-k-1,
// reducing it with its own input into its output. After p-1 steps rank r holds chunk r+1 fully
// reduced. Allgather, steps k = 0..p-2: rank r sends chunk r+1-k and receives chunk r-k.
// Everything is one phase: each step depends on the previous one only through the same chunk, so an
// executor pipelines slices across all 2(p-1) steps, as NCCL's ring does.
//
// Cost (Thakur et al. 2005; Patarasuk & Yuan 2009): 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ.
#include "collectives/plan/builder.h"

namespace cclab::plan {

Plan allReduceRing(int nranks, std::int64_t count) {
  Plan plan = build::emptyPlan(Collective::AllReduce, Algorithm::Ring, nranks, count);
  const int p = nranks;
  for (int r = 0; r < p; ++r) {
    build::Ops ops(plan, r);
    if (p == 1) {
      ops.copy(build::in(0, count), build::out(0, count), 0);
      continue;
    }
    const int next = build::mod(r + 1, p), prev = build::mod(r - 1, p);
    auto chunk = [&](int i) { return chunkOf(count, p, build::mod(i, p)); };
    for (int k = 0; k < p - 1; ++k) {  // reduce-scatter
      const Chunk s = chunk(r - k);
      ops.send(next, k == 0 ? build::in(s.offset, s.count) : build::out(s.offset, s.count), 0);
      const Chunk v = chunk(r - k - 1);
      ops.recvReduce(prev, build::in(v.offset, v.count), build::out(v.offset, v.count), 0);
    }
    for (int k = 0; k < p - 1; ++k) {  // allgather
      const Chunk s = chunk(r + 1 - k);
      ops.send(next, build::out(s.offset, s.count), 0);
      const Chunk v = chunk(r - k);
      ops.recv(prev, build::out(v.offset, v.count), 0);
    }
  }
  return plan;
}

}  // namespace cclab::plan
