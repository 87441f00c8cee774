// Gathering a mini-batch: copies the rows and labels named by `indices` into contiguous buffers.
#pragma once

#include <cstdint>
#include <span>

#include "trainer/data/dataset.h"

namespace cclab::trainer {

// x must hold indices.size() * data.features floats, y indices.size() ints.
void gatherBatch(const Dataset& data, std::span<const std::int64_t> indices, std::span<float> x, std::span<int> y);

}  // namespace cclab::trainer
