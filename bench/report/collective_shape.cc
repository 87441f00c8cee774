// A swept size as a collective's counts and buffer sizes (collective_shape.h).
#include "bench/report/collective_shape.h"

#include <algorithm>

namespace cclab::bench {

using plan::Collective;

CollectiveShape shapeOf(Collective c, std::int64_t bytes, std::size_t elemSize, int nranks) {
  const std::int64_t elems = bytes / static_cast<std::int64_t>(elemSize);
  CollectiveShape s;
  switch (c) {
    case Collective::ReduceScatter:
    case Collective::AllGather: s.count = elems / nranks; break;
    default: s.count = elems; break;
  }
  const plan::BufferCounts counts = plan::bufferCounts(c, nranks, s.count);
  s.inputCount = counts.input;
  s.outputCount = counts.output;
  s.sizeBytes = std::max(counts.input, counts.output) * static_cast<std::int64_t>(elemSize);
  return s;
}

const char* perfToolName(Collective c) {
  switch (c) {
    case Collective::AllReduce: return "all_reduce_perf";
    case Collective::ReduceScatter: return "reduce_scatter_perf";
    case Collective::AllGather: return "all_gather_perf";
    case Collective::Broadcast: return "broadcast_perf";
    case Collective::Reduce: return "reduce_perf";
  }
  return "perf";
}

}  // namespace cclab::bench
