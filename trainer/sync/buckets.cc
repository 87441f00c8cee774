#include "trainer/sync/buckets.h"

namespace cclab::trainer {

std::vector<Bucket> planBuckets(const ParameterLayout& layout, std::size_t firstBucketBytes, std::size_t bucketBytes) {
  std::vector<Bucket> buckets;
  Bucket open;
  bool hasOpen = false;
  for (int l = layout.layerCount() - 1; l >= 0; --l) {
    const LayerSlice& s = layout.layer(l);
    if (!hasOpen) {
      open = {l, l, s.begin(), 0};
      hasOpen = true;
    }
    open.firstLayer = l;
    open.offset = s.begin();
    open.count += s.count();
    const std::size_t cap = buckets.empty() ? firstBucketBytes : bucketBytes;
    if (static_cast<std::size_t>(open.count) * sizeof(float) >= cap) {
      buckets.push_back(open);
      hasOpen = false;
    }
  }
  if (hasOpen) buckets.push_back(open);
  return buckets;
}

}  // namespace cclab::trainer
