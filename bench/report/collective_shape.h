// How a swept size maps onto a collective's counts, and its bandwidths: nccl-tests' conventions
// (src/all_reduce.cu, reduce_scatter.cu, all_gather.cu, broadcast.cu, reduce.cu; doc/PERFORMANCE.md).
//
//   collective     count (API)          size column               algbw = S/t with S =     busbw factor
//   allreduce      bytes/w              count*w                   count*w                  2(n-1)/n
//   reducescatter  (bytes/w)/n          count*w*n (the input)     count*w*n                (n-1)/n
//   allgather      (bytes/w)/n          count*w*n (the output)    count*w*n                (n-1)/n
//   broadcast      bytes/w              count*w                   count*w                  1
//   reduce         bytes/w              count*w                   count*w                  1
//
// So a size that is not a multiple of the element size w (times n for reducescatter/allgather) is
// rounded down, as nccl-tests does. The count column is the API's count (per rank for the last two).
// (Newer nccl-tests also round reducescatter's count down to 16 bytes; we do not.)
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/plan/plan.h"

namespace cclab::bench {

struct CollectiveShape {
  std::int64_t count = 0;       // the count passed to the collective (NCCL's meaning)
  std::int64_t sizeBytes = 0;   // the table's size column: max(input, output) bytes of one rank
  std::int64_t inputCount = 0;  // elements of one rank's input buffer
  std::int64_t outputCount = 0; // elements of one rank's output buffer
};

CollectiveShape shapeOf(plan::Collective c, std::int64_t bytes, std::size_t elemSize, int nranks);

// PERFORMANCE.md's correction factor from algbw to busbw.
double busBwFactor(plan::Collective c, int nranks);

struct Bandwidth {
  double algBw = 0;  // GB/s, 1 GB = 1e9 bytes
  double busBw = 0;
};
Bandwidth bandwidthOf(plan::Collective c, const CollectiveShape& shape, std::size_t elemSize, int nranks, double seconds);

// nccl-tests' names of the tools' collectives in headers and JSON: "allreduce", "reducescatter", ...
const char* perfToolName(plan::Collective c);  // "all_reduce_perf", ...

}  // namespace cclab::bench
