// Recursive halving-doubling allreduce (collectives/plan/allreduce_rhd.cc; Rabenseifner 2004,
// Thakur, Rabenseifner & Gropp 2005).
//
// q = the largest power of two <= p. Step j = 1..log2 q of the halving moves and reduces n/2^j bytes,
// the doubling steps move the same sizes back; with R_j slice rounds per step (each round a full
// exchange: the next slice is sent after the previous one was reduced):
//   Σ_j R_j·2α + 2(q-1)/q·nβ + (q-1)/q·nγ      (R_j = 1: 2·log2(p)·α + 2(p-1)/p·nβ + (p-1)/p·nγ)
// When p is not a power of two, the p-q extra ranks fold in first and get the result last, each a
// one-way stream of R_0 slices of b_0 = n/R_0 bytes:
//   + (α + b_0β + b_0γ) + (R_0-1)·max(b_0β, b_0γ) + α + nβ      (R_0 = 1: + 2α + 2nβ + nγ)
// Exact when n splits evenly into q blocks and slices, and either p is a power of two or R_0 = 1;
// otherwise an approximation (the folded ranks start the halving late and the others wait less).
#include <bit>

#include "sim/analytic.h"

namespace cclab::sim {
namespace {

std::int64_t roundsOf(std::int64_t count, std::int64_t slice) {
  if (count <= 0) return 0;
  if (slice <= 0) return 1;
  return (count + slice - 1) / slice;
}

}  // namespace

Micros halvingDoublingAllReduce(int p, std::int64_t count, std::int64_t e, std::int64_t slice, const CostParams& k) {
  const double n = static_cast<double>(count * e);
  if (p == 1) return n * k.delta;
  const int q = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
  Micros t = 0;
  std::int64_t block = count;  // elements moved in this step
  for (int mask = q / 2; mask >= 1; mask /= 2) {
    block /= 2;
    const double b = static_cast<double>(block * e);
    const auto R = static_cast<double>(roundsOf(block, slice));
    t += R * 2 * k.alpha + 2 * b * k.beta + b * k.gamma;
  }
  if (p != q) {  // fold and unfold: one-way streams of R0 slices of b0 bytes, pipelined
    const auto R0 = static_cast<double>(roundsOf(count, slice));
    const double b0 = n / R0;
    t += (k.alpha + b0 * k.beta + b0 * k.gamma) + (R0 - 1) * std::max(b0 * k.beta, b0 * k.gamma);
    t += k.alpha + R0 * b0 * k.beta;
  }
  return t;
}

// Recursive doubling (collectives/plan/allreduce_rd.cc; Thakur, Rabenseifner & Gropp 2005). Each of
// the log2(q) steps is a phase of R slice rounds, each round a full exchange of b = n/R bytes:
//   log2(q)·(R·α + nβ + nγ) + nδ (the final copy to the output)
// and when p is not a power of two the fold before (as above) and, after the copy, a one-way stream
// of the result to the folded rank: + α + nβ with one slice. Exact with one slice per op when p is a
// power of two; otherwise an upper bound (ranks that did not fold overlap the fold with their first
// step; the replay is within a fold of it).
Micros recursiveDoublingAllReduce(int p, std::int64_t count, std::int64_t e, std::int64_t slice, const CostParams& k) {
  const double n = static_cast<double>(count * e);
  if (p == 1) return n * k.delta;
  const int q = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
  const auto R = static_cast<double>(roundsOf(count, slice));
  const double steps = std::countr_zero(static_cast<unsigned>(q));
  Micros t = steps * (R * k.alpha + n * k.beta + n * k.gamma) + n * k.delta;
  if (p != q) {
    const double b0 = n / R;
    t += (k.alpha + b0 * k.beta + b0 * k.gamma) + (R - 1) * std::max(b0 * k.beta, b0 * k.gamma);
    t += k.alpha + n * k.beta;
  }
  return t;
}

}  // namespace cclab::sim
