#include "bench/peers/peer_check.h"

#include "collectives/core/test_data.h"

namespace cclab::bench {

void PeerAllReduceCheck::fillInput(int rank, void* dst) const {
  cclab::fillInput({type_, ReduceOp::Sum, nranks_, seed_}, rank, 0, static_cast<std::size_t>(count_), dst);
}

std::int64_t PeerAllReduceCheck::countWrong(const void* got, void* expectedScratch) const {
  const auto n = static_cast<std::size_t>(count_);
  fillExpectedReduce({type_, ReduceOp::Sum, nranks_, seed_}, 0, n, expectedScratch);
  return static_cast<std::int64_t>(cclab::countWrong(type_, got, expectedScratch, n));
}

}  // namespace cclab::bench
