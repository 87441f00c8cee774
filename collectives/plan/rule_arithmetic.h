// Index arithmetic the op-source rules share (op_source_ring.cc, op_source_hierarchical.cc; internal
// to collectives/plan): their op() runs once per op-slice of a replay, so no division per op.
#pragma once

#include <algorithm>
#include <cstdint>

#include "collectives/plan/plan.h"

namespace cclab::plan::rules {

// a mod n for a in [-n, 2n) (every index the rules compute), without a division.
inline int wrap(std::int64_t a, int n) { return static_cast<int>(a < 0 ? a + n : a >= n ? a - n : a); }

// chunkOf(whole.count, n, i) offset by whole.offset, with the quotient and remainder computed once.
struct Split {
  std::int64_t offset = 0, q = 0, rem = 0;
  Split(Chunk whole, int n) : offset(whole.offset), q(whole.count / n), rem(whole.count % n) {}
  [[nodiscard]] Chunk operator()(int i) const {
    return {offset + i * q + std::min<std::int64_t>(i, rem), q + (i < rem ? 1 : 0)};
  }
};

}  // namespace cclab::plan::rules
