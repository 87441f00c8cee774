#include "collectives/cuda/launch_geometry.h"

#include <algorithm>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::cuda {

LaunchGeometry reduceCopyGeometry(std::int64_t bytes, int smCount, int ranksOnDevice) {
  LaunchGeometry g;
  if (bytes <= 0) {
    g.blocks = 0;
    return g;
  }
  const std::int64_t cap = std::max<std::int64_t>(1, std::int64_t{smCount} * kBlocksPerSm / std::max(1, ranksOnDevice));
  const std::int64_t need = (bytes + kBlockIterBytes - 1) / kBlockIterBytes;
  g.blocks = static_cast<int>(std::clamp<std::int64_t>(need, 1, cap));
  return g;
}

LowLatencyGeometry lowLatencyGeometry(std::int64_t maxStepBytes, int ranksOnDevice, int maxResidentBlocks) {
  const int ranks = std::max(1, ranksOnDevice);
  const int fit = maxResidentBlocks / ranks;
  if (fit < 1)
    throw InvalidArgument("cuda ll: " + std::to_string(ranks) + " ranks on one device need " + std::to_string(ranks) +
                          " resident blocks, the device holds " + std::to_string(maxResidentBlocks));
  LowLatencyGeometry g;
  const std::int64_t need = std::max<std::int64_t>(1, (maxStepBytes + kLlBytesPerBlock - 1) / kLlBytesPerBlock);
  g.blocksPerRank = static_cast<int>(std::min<std::int64_t>(need, fit));
  return g;
}

}  // namespace cclab::cuda
