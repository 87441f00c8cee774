// Names of the vocabulary's enums, and the arrival statistics' derived figures.
#include "collectives/call/vocabulary.h"

#include "collectives/core/errors.h"

namespace cclab {

std::string_view name(Backend b) {
  switch (b) {
    case Backend::Host: return "host";
    case Backend::Cuda: return "cuda";
    case Backend::Nccl: return "nccl";
    case Backend::Proc: return "proc";
  }
  return "?";
}

Backend parseBackend(std::string_view s) {
  for (Backend b : {Backend::Host, Backend::Cuda, Backend::Nccl, Backend::Proc})
    if (s == name(b)) return b;
  throw InvalidArgument("unknown backend '" + std::string(s) + "' (host, cuda, nccl, proc)");
}

std::string_view name(CudaOrder o) {
  switch (o) {
    case CudaOrder::Events: return "events";
    case CudaOrder::Graph: return "graph";
    case CudaOrder::LowLatency: return "ll";
  }
  return "?";
}

std::string cudaOrderNames() {
  std::string names;
  for (CudaOrder o : kAllCudaOrders) names += (names.empty() ? "" : ", ") + std::string(name(o));
  return names;
}

CudaOrder parseCudaOrder(std::string_view s) {
  for (CudaOrder o : kAllCudaOrders)
    if (s == name(o)) return o;
  throw InvalidArgument("unknown order '" + std::string(s) + "' (" + cudaOrderNames() + ")");
}

double RankArrivals::meanLatenessUs() const {
  if (calls <= 0) return 0.0;
  return std::chrono::duration<double, std::micro>(totalLateness).count() / static_cast<double>(calls);
}

double RankArrivals::lastShare() const {
  return calls <= 0 ? 0.0 : static_cast<double>(lastCount) / static_cast<double>(calls);
}

}  // namespace cclab
