#include "collectives/cuda/device_map.h"

#include <algorithm>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::cuda {

DeviceMap::DeviceMap(int nranks, int ndevices) : nranks_(nranks), devicesUsed_(std::min(nranks, ndevices)) {
  if (nranks < 1) throw InvalidArgument("cuda: nranks must be >= 1, got " + std::to_string(nranks));
  if (ndevices < 1) throw InvalidArgument("cuda: need at least one device, got " + std::to_string(ndevices));
}

void DeviceMap::checkRank(int rank) const {
  if (rank < 0 || rank >= nranks_)
    throw InvalidArgument("cuda: rank " + std::to_string(rank) + " is not a rank of " + std::to_string(nranks_));
}

int DeviceMap::device(int rank) const {
  checkRank(rank);
  return rank % devicesUsed_;
}

int DeviceMap::localIndex(int rank) const {
  checkRank(rank);
  return rank / devicesUsed_;
}

int DeviceMap::ranksOn(int device) const {
  if (device < 0 || device >= devicesUsed_) return 0;
  return (nranks_ - device + devicesUsed_ - 1) / devicesUsed_;
}

std::vector<int> DeviceMap::ranksOf(int device) const {
  std::vector<int> out;
  for (int r = device; device >= 0 && r < nranks_; r += devicesUsed_) out.push_back(r);
  return out;
}

int DeviceMap::maxRanksPerDevice() const { return ranksOn(0); }

}  // namespace cclab::cuda
