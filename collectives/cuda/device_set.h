// The devices a CUDA communicator uses: their properties, and which of them may load each other's
// memory. Peer access is enabled between every pair where cudaDeviceCanAccessPeer allows; a pair
// without it is read through staged copies (cudaMemcpyPeerAsync), and description() says so.
#pragma once

#include <string>
#include <vector>

namespace cclab::cuda {

struct DeviceInfo {
  int id = 0;
  std::string name;
  int smCount = 1;
  int major = 0, minor = 0;
  bool cooperativeLaunch = false;
};

// Devices visible to this process; 0 with a reason (no driver, no device) when there are none.
int visibleDeviceCount(std::string* why = nullptr);

class DeviceSet {
 public:
  explicit DeviceSet(int ndevices);  // devices 0..ndevices-1; enables peer access

  [[nodiscard]] int size() const { return static_cast<int>(devices_.size()); }
  [[nodiscard]] const DeviceInfo& info(int device) const { return devices_.at(static_cast<std::size_t>(device)); }
  // May a kernel on `reader` load `owner`'s memory directly?
  [[nodiscard]] bool canRead(int reader, int owner) const;
  [[nodiscard]] bool allDirect() const;
  // "1 x NVIDIA H200 (sm_90, 132 SMs)", plus how devices reach each other when there are several.
  [[nodiscard]] std::string describe() const;

 private:
  std::vector<DeviceInfo> devices_;
  std::vector<char> peer_;  // [reader * size + owner]
};

}  // namespace cclab::cuda
