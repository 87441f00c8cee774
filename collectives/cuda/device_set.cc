#include "collectives/cuda/device_set.h"

#include <map>

#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/cuda_resources.h"

namespace cclab::cuda {

int visibleDeviceCount(std::string* why) {
  int n = 0;
  const cudaError_t status = cudaGetDeviceCount(&n);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear it: this is an answer, not a failure
    if (why) *why = std::string("no usable CUDA device (") + cudaGetErrorName(status) + ": " + cudaGetErrorString(status) + ")";
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device is visible";
  return n;
}

DeviceSet::DeviceSet(int ndevices) {
  for (int d = 0; d < ndevices; ++d) {
    cudaDeviceProp prop{};
    CCLAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
    devices_.push_back({d, prop.name, prop.multiProcessorCount, prop.major, prop.minor, prop.cooperativeLaunch != 0});
  }
  const int n = size();
  peer_.assign(static_cast<std::size_t>(n * n), 0);
  for (int a = 0; a < n; ++a) {
    peer_[static_cast<std::size_t>(a * n + a)] = 1;
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      int can = 0;
      CCLAB_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) continue;
      DeviceGuard guard(a);
      const cudaError_t status = cudaDeviceEnablePeerAccess(b, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError();
      else
        CCLAB_CUDA_CHECK(status);
      peer_[static_cast<std::size_t>(a * n + b)] = 1;
    }
  }
}

bool DeviceSet::canRead(int reader, int owner) const {
  return peer_.at(static_cast<std::size_t>(reader * size() + owner)) != 0;
}

bool DeviceSet::allDirect() const {
  for (char c : peer_)
    if (!c) return false;
  return true;
}

std::string DeviceSet::describe() const {
  std::map<std::string, int> names;
  for (const auto& d : devices_) ++names[d.name];
  std::string out;
  for (const auto& [name, count] : names) out += (out.empty() ? "" : " + ") + std::to_string(count) + " x " + name;
  const DeviceInfo& d0 = devices_.front();
  out += " (sm_" + std::to_string(d0.major) + std::to_string(d0.minor) + ", " + std::to_string(d0.smCount) + " SMs)";
  if (size() > 1)
    out += allDirect() ? ", peer access between all devices" : ", staged copies where devices lack peer access";
  return out;
}

}  // namespace cclab::cuda
