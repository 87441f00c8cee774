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

double busBwFactor(Collective c, int nranks) {
  const double n = nranks;
  switch (c) {
    case Collective::AllReduce: return 2.0 * (n - 1) / n;
    case Collective::ReduceScatter:
    case Collective::AllGather: return (n - 1) / n;
    case Collective::Broadcast:
    case Collective::Reduce: return 1.0;
  }
  return 1.0;
}

Bandwidth bandwidthOf(Collective c, const CollectiveShape& shape, std::size_t elemSize, int nranks, double seconds) {
  if (seconds <= 0) return {};
  // S of PERFORMANCE.md: the whole array (count*n for the per-rank counts of reducescatter/allgather).
  const bool perRankCount = c == Collective::ReduceScatter || c == Collective::AllGather;
  const double bytes = static_cast<double>(shape.count) * static_cast<double>(elemSize) * (perRankCount ? nranks : 1);
  constexpr double kBytesPerGB = 1e9;
  const double algBw = bytes / kBytesPerGB / seconds;
  return {algBw, algBw * busBwFactor(c, nranks)};
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
