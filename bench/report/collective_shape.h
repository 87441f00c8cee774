// How a swept size maps onto a collective's counts: nccl-tests' conventions
// (src/all_reduce.cu, reduce_scatter.cu, all_gather.cu, broadcast.cu, reduce.cu; doc/PERFORMANCE.md).
//
//   collective     count (API)          size column               algbw = S/t with S =
//   allreduce      bytes/w              count*w                   count*w
//   reducescatter  (bytes/w)/n          count*w*n (the input)     count*w*n
//   allgather      (bytes/w)/n          count*w*n (the output)    count*w*n
//   broadcast      bytes/w              count*w                   count*w
//   reduce         bytes/w              count*w                   count*w
//
// algbw and busbw come from collectives/conventions/bandwidth.h with S = sizeBytes (the size column).
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

// nccl-tests' names of the tools' collectives in headers and JSON: "allreduce", "reducescatter", ...
const char* perfToolName(plan::Collective c);  // "all_reduce_perf", ...

}  // namespace cclab::bench
