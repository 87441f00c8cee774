#include "trainer/sync/buckets.h"

namespace cclab::trainer {
namespace {

struct Range {
  std::int64_t begin = 0;
  std::int64_t count = 0;
};

template <typename RangeOf>
std::vector<Bucket> plan(int n, const RangeOf& rangeOf, std::size_t firstBucketBytes, std::size_t bucketBytes) {
  std::vector<Bucket> buckets;
  Bucket open;
  bool hasOpen = false;
  for (int l = n - 1; l >= 0; --l) {
    const Range s = rangeOf(l);
    if (!hasOpen) {
      open = {l, l, s.begin, 0};
      hasOpen = true;
    }
    open.firstLayer = l;
    open.offset = s.begin;
    open.count += s.count;
    const std::size_t cap = buckets.empty() ? firstBucketBytes : bucketBytes;
    if (static_cast<std::size_t>(open.count) * sizeof(float) >= cap) {
      buckets.push_back(open);
      hasOpen = false;
    }
  }
  if (hasOpen) buckets.push_back(open);
  return buckets;
}

}  // namespace

std::vector<Bucket> planBuckets(const ParameterLayout& layout, std::size_t firstBucketBytes, std::size_t bucketBytes) {
  return plan(layout.layerCount(), [&](int l) { return Range{layout.layer(l).begin(), layout.layer(l).count()}; },
              firstBucketBytes, bucketBytes);
}

std::vector<Bucket> planBuckets(const GradientUnits& units, std::size_t firstBucketBytes, std::size_t bucketBytes) {
  return plan(units.size(), [&](int u) { return Range{units.unit(u).offset, units.unit(u).count}; }, firstBucketBytes,
              bucketBytes);
}

}  // namespace cclab::trainer
