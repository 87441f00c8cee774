// nccl-tests' bandwidths (doc/PERFORMANCE.md), the one definition bench, cclab-sim and (through the
// JSON they write) the plots use:
//   algbw = S / t, with S the table's size column in bytes (for reducescatter and allgather the whole
//           array, count * n elements) and 1 GB = 1e9 bytes;
//   busbw = algbw * factor: allreduce 2(n-1)/n, reducescatter and allgather (n-1)/n, broadcast and
//           reduce 1.
#pragma once

#include <cstdint>

#include "collectives/plan/plan.h"

namespace cclab::conventions {

// PERFORMANCE.md's correction factor from algbw to busbw for `nranks` >= 1 ranks.
double busBwFactor(plan::Collective c, int nranks);

struct Bandwidth {
  double algBw = 0;  // GB/s
  double busBw = 0;  // GB/s
};

// The bandwidths of moving `sizeBytes` (the size column) in `seconds`; {0, 0} when seconds <= 0.
Bandwidth bandwidthOf(plan::Collective c, int nranks, std::int64_t sizeBytes, double seconds);

}  // namespace cclab::conventions
