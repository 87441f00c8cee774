// algbw and busbw as nccl-tests defines them (bandwidth.h).
#include "collectives/conventions/bandwidth.h"

namespace cclab::conventions {

double busBwFactor(plan::Collective c, int nranks) {
  const double n = nranks;
  switch (c) {
    case plan::Collective::AllReduce: return 2.0 * (n - 1) / n;
    case plan::Collective::ReduceScatter:
    case plan::Collective::AllGather: return (n - 1) / n;
    case plan::Collective::Broadcast:
    case plan::Collective::Reduce: return 1.0;
  }
  return 1.0;
}

Bandwidth bandwidthOf(plan::Collective c, int nranks, std::int64_t sizeBytes, double seconds) {
  if (!(seconds > 0)) return {};
  constexpr double kBytesPerGB = 1e9;
  const double algBw = static_cast<double>(sizeBytes) / kBytesPerGB / seconds;
  return {algBw, algBw * busBwFactor(c, nranks)};
}

}  // namespace cclab::conventions
