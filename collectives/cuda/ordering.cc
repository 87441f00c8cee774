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

std::unique_ptr<Ordering> makeOrdering(const std::string& name, CudaContext& context) {
  if (name == "events") return std::make_unique<EventOrdering>(context);
  if (name == "graph") return std::make_unique<GraphOrdering>(context);
  if (name == "ll") return std::make_unique<LowLatencyOrdering>(context);
  throw InvalidArgument("cuda: unknown order '" + name + "' (events, graph, ll)");
}

}  // namespace cclab::cuda
