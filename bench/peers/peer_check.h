// A peer rank's view of the exact test data (collectives/core/test_data.h): its allreduce input and
// the number of wrong elements in its output. Same data and reference as the harness's #wrong.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/core/dtype.h"

namespace cclab::bench {

class PeerAllReduceCheck {
 public:
  PeerAllReduceCheck(DataType type, int nranks, std::int64_t count, std::uint64_t seed)
      : type_(type), nranks_(nranks), count_(count), seed_(seed) {}
  void fillInput(int rank, void* dst) const;
  // `expectedScratch` holds count elements; filled here.
  [[nodiscard]] std::int64_t countWrong(const void* got, void* expectedScratch) const;

 private:
  DataType type_;
  int nranks_;
  std::int64_t count_;
  std::uint64_t seed_;
};

}  // namespace cclab::bench
