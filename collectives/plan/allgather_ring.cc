// Ring allgather: rank r's input (count elements) lands at output chunk r on every rank.
//
// Rank r copies its input to output chunk r; steps k = 0..p-2: it sends chunk r-k (its input at
// k = 0) to r+1 and receives chunk r-k-1 from r-1. One phase, pipelined.
//
// Cost: (p-1)α + (p-1)/p·Nβ, N = nranks*count elements.
#include "collectives/plan/builder.h"

namespace cclab::plan {

Plan allGatherRing(int nranks, std::int64_t count) {
  Plan plan = build::emptyPlan(Collective::AllGather, Algorithm::Ring, nranks, count);
  const int p = nranks;
  for (int r = 0; r < p; ++r) {
    build::Ops ops(plan, r);
    const int next = build::mod(r + 1, p), prev = build::mod(r - 1, p);
    auto chunk = [&](int c) { return build::out(std::int64_t{build::mod(c, p)} * count, count); };
    for (int k = 0; k < p - 1; ++k) {
      ops.send(next, k == 0 ? build::in(0, count) : chunk(r - k), 0);
      ops.recv(prev, chunk(r - k - 1), 0);
    }
    ops.copy(build::in(0, count), chunk(r), 0);
  }
  return plan;
}

}  // namespace cclab::plan
