#include "collectives/cuda/ordering.h"

#include <cstddef>

#include "collectives/core/errors.h"
#include "collectives/cuda/event_ordering.h"
#include "collectives/cuda/graph_ordering.h"
#include "collectives/cuda/ll_ordering.h"

namespace cclab::cuda {

void* address(const RankPointers& p, int rank, const plan::Range& r, std::size_t elemSize) {
  auto* base = static_cast<std::byte*>(p.base[static_cast<int>(r.buf)]);
  if (!base && r.count > 0)
    throw InvalidArgument("cuda: rank " + std::to_string(rank) + " passed a null " + std::string(plan::name(r.buf)) +
                          " buffer that the plan uses");
  return base ? base + static_cast<std::size_t>(r.offset) * elemSize : nullptr;
}

std::unique_ptr<Ordering> makeOrdering(CudaOrder order, CudaContext& context) {
  switch (order) {
    case CudaOrder::Events: return std::make_unique<EventOrdering>(context);
    case CudaOrder::Graph: return std::make_unique<GraphOrdering>(context);
    case CudaOrder::LowLatency: return std::make_unique<LowLatencyOrdering>(context);
  }
  throw InvalidArgument("cuda: unknown order (" + cudaOrderNames() + ")");
}

}  // namespace cclab::cuda
