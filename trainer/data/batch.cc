#include "trainer/data/batch.h"

#include <algorithm>

#include "collectives/core/errors.h"

namespace cclab::trainer {

void gatherBatch(const Dataset& data, std::span<const std::int64_t> indices, std::span<float> x, std::span<int> y) {
  const auto n = indices.size();
  const auto f = static_cast<std::size_t>(data.features);
  if (x.size() < n * f || y.size() < n) throw InvalidArgument("gatherBatch: output buffers are too small");
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t k = indices[i];
    if (k < 0 || k >= data.size()) throw InvalidArgument("gatherBatch: index " + std::to_string(k) + " out of range");
    const auto row = data.row(k);
    std::copy(row.begin(), row.end(), x.begin() + static_cast<std::ptrdiff_t>(i * f));
    y[i] = data.labels[static_cast<std::size_t>(k)];
  }
}

}  // namespace cclab::trainer
