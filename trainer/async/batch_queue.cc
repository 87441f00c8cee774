#include "trainer/async/batch_queue.h"

#include <string>

#include "collectives/core/errors.h"

namespace cclab::trainer {

void BatchQueue::reset(std::vector<std::int64_t> indices, std::int64_t batchSize, std::int64_t batches) {
  if (batchSize < 1 || batches < 0 || batches * batchSize > static_cast<std::int64_t>(indices.size()))
    throw InvalidArgument("BatchQueue: " + std::to_string(batches) + " batches of " + std::to_string(batchSize) +
                          " do not fit " + std::to_string(indices.size()) + " indices");
  indices_ = std::move(indices);
  batchSize_ = batchSize;
  batches_ = batches;
  next_.store(0, std::memory_order_relaxed);
}

std::optional<BatchQueue::Claim> BatchQueue::next() {
  const std::int64_t k = next_.fetch_add(1, std::memory_order_relaxed);
  if (k >= batches_) return std::nullopt;
  return Claim{k, std::span<const std::int64_t>(indices_).subspan(static_cast<std::size_t>(k * batchSize_),
                                                                   static_cast<std::size_t>(batchSize_))};
}

}  // namespace cclab::trainer
