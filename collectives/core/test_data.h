// Deterministic test data whose reductions are exact, so checks can compare bits.
//
// Rank r's element i is a hash of (seed, r, i) mapped to a value chosen per type and op so that the
// reduction over any number of ranks, in any order, is exactly representable: sums of small integers
// (quarters for float and double), products of +-1 and +-2^+-1 on at most 12 ranks per element,
// any value for min and max, and any byte for int8 and uint8 (wrap-around is associative). The
// expected result is computed in double or int64 and rounded once, so #wrong counts real errors.
// Shared by the benchmarks (#wrong) and the tests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/core/dtype.h"

namespace cclab {

struct DataSpec {
  DataType type = DataType::Float32;
  ReduceOp op = ReduceOp::Sum;
  int nranks = 1;
  std::uint64_t seed = 1;
};

// Rank `rank`'s input elements [first, first + n) (element indices of its input buffer).
void fillInput(const DataSpec& spec, int rank, std::int64_t first, std::size_t n, void* dst);

// The reduction over all ranks of input elements [first, first + n), in the spec's type (with Avg's
// division applied).
void fillExpectedReduce(const DataSpec& spec, std::int64_t first, std::size_t n, void* dst);

// Elements of `got` whose bits differ from `expected` (for floats, +0 and -0 compare equal).
std::size_t countWrong(DataType t, const void* got, const void* expected, std::size_t n);

}  // namespace cclab
