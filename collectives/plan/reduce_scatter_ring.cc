// Ring reduce-scatter: rank r ends with chunk r (count elements) of the sum of all inputs
// (nranks*count elements each).
//
// Steps k = 0..p-2: rank r sends chunk r-1-k (its input at k = 0, else the partial sum it received at
// step k-1) to r+1 and receives chunk r-2-k from r-1, reducing it with its own input. Partial sums
// alternate between two scratch slots (the output may alias the input in place, so it cannot hold
// them); the last step writes the output. One phase, so slices pipeline across steps.
//
// Cost: (p-1)α + (p-1)/p·Nβ + (p-1)/p·Nγ, N = nranks*count elements.
#include "collectives/plan/builder.h"

namespace cclab::plan {

Plan reduceScatterRing(int nranks, std::int64_t count) {
  Plan plan = build::emptyPlan(Collective::ReduceScatter, Algorithm::Ring, nranks, count);
  const int p = nranks;
  plan.scratchCount = p > 2 ? 2 * count : 0;
  for (int r = 0; r < p; ++r) {
    build::Ops ops(plan, r);
    const int next = build::mod(r + 1, p), prev = build::mod(r - 1, p);
    auto input = [&](int chunk) { return build::in(std::int64_t{build::mod(chunk, p)} * count, count); };
    if (p == 1) {
      ops.copy(input(r), build::out(0, count), 0);
      continue;
    }
    auto slot = [&](int k) { return k == p - 2 ? build::out(0, count) : build::scratch((k % 2) * count, count); };
    for (int k = 0; k < p - 1; ++k) {
      ops.send(next, k == 0 ? input(r - 1) : slot(k - 1), 0);
      ops.recvReduce(prev, input(r - 2 - k), slot(k), 0);
    }
  }
  return plan;
}

}  // namespace cclab::plan
