#include "collectives/cuda/slicing.h"

#include <algorithm>

namespace cclab::cuda {

std::int64_t sliceElemsFor(std::size_t requestedBytes, std::size_t elemSize, int devicesUsed) {
  const std::size_t w = std::max<std::size_t>(1, elemSize);
  if (requestedBytes > 0) return static_cast<std::int64_t>(std::max<std::size_t>(1, requestedBytes / w));
  if (devicesUsed <= 1) return 0;
  return static_cast<std::int64_t>(std::max<std::size_t>(1, kCrossDeviceSliceBytes / w));
}

}  // namespace cclab::cuda
