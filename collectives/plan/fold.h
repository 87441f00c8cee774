// The fold that lets power-of-two algorithms (allreduce_rd.cc, allreduce_rhd.cc) run on any nranks
// (Thakur, Rabenseifner & Gropp 2005, §4): with q = the largest power of two <= p and e = p - q extra
// ranks, each odd rank below 2e folds its vector into the even rank below it and sits out; the q
// remaining ranks get virtual ids v (r/2 below 2e, r - e above) and run the power-of-two algorithm on
// them; at the end each folding rank hands the result to the extra rank above it.
#pragma once

#include <bit>

namespace cclab::plan {

class Fold {
 public:
  explicit Fold(int nranks)
      : q_(static_cast<int>(std::bit_floor(static_cast<unsigned>(nranks)))), e_(nranks - q_) {}

  [[nodiscard]] int powerOfTwo() const { return q_; }  // q: ranks that run the algorithm
  [[nodiscard]] int log2() const { return std::countr_zero(static_cast<unsigned>(q_)); }
  // An odd rank below 2e: sends its vector to r - 1, receives the result from it at the end.
  [[nodiscard]] bool isExtra(int r) const { return r < 2 * e_ && r % 2 == 1; }
  // An even rank below 2e: reduces the vector of r + 1 in first, sends it the result at the end.
  [[nodiscard]] bool folds(int r) const { return r < 2 * e_ && r % 2 == 0; }
  // Virtual id in 0..q-1 of a rank that is not extra, and its inverse.
  [[nodiscard]] int virtualRank(int r) const { return r < 2 * e_ ? r / 2 : r - e_; }
  [[nodiscard]] int rankOf(int v) const { return v < e_ ? 2 * v : v + e_; }

 private:
  int q_;
  int e_;
};

}  // namespace cclab::plan
