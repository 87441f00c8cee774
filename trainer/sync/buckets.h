// Gradient buckets, as PyTorch DDP's: consecutive layers grouped in backward order (the last layer
// first), each bucket closed once it reaches its cap; the first bucket has a smaller cap so its
// allreduce starts early in the backward pass. A bucket is ready when its lowest layer's backward is
// done; it is one contiguous range of the flat gradient (model/layout.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trainer/model/gradient_units.h"
#include "trainer/model/layout.h"

namespace cclab::trainer {

struct Bucket {
  int firstLayer = 0;  // lowest layer (unit) index: the bucket is ready after its backward
  int lastLayer = 0;
  std::int64_t offset = 0;  // elements into the flat gradient
  std::int64_t count = 0;
};

// Buckets in the order their allreduces are issued (every rank issues them in this order).
std::vector<Bucket> planBuckets(const ParameterLayout& layout, std::size_t firstBucketBytes, std::size_t bucketBytes);
// The same over a whole model's gradient units (model/gradient_units.h): firstLayer/lastLayer are unit
// indices, so buckets follow the tensors (synthetic ones included), as DDP's follow parameters.
std::vector<Bucket> planBuckets(const GradientUnits& units, std::size_t firstBucketBytes, std::size_t bucketBytes);

}  // namespace cclab::trainer
