#include "collectives/cuda/cuda_context.h"

#include <string>

#include "collectives/core/errors.h"
#include "collectives/cuda/cuda_check.h"

namespace cclab::cuda {
namespace {

int devicesOrThrow() {
  std::string why;
  const int n = visibleDeviceCount(&why);
  if (n < 1) throw Error("cuda: " + why);
  return n;
}

}  // namespace

RankState::RankState(int rank, int device, cudaStream_t shared)
    : rank_(rank), device_(device), lane_(makeStream(device)), stream_(shared ? shared : lane_.get()),
      start_(makeEvent(device)), ready_(makeEvent(device)), done_(makeEvent(device)) {}

void RankState::reserveStepEvents(std::size_t n) {
  while (stepEvents_.size() < n) stepEvents_.push_back(makeEvent(device_));
}

void RankState::reserveChannelStreams(std::size_t n) {
  while (channelStreams_.size() < n) {
    channelStreams_.push_back(makeStream(device_));
    channelDone_.push_back(makeEvent(device_));
  }
}

void* RankState::grow(DeviceMemory& mem, std::size_t bytes) {
  if (mem.bytes() >= bytes) return mem.get();
  {
    DeviceGuard guard(device_);
    CCLAB_CUDA_CHECK(cudaStreamSynchronize(stream()));  // earlier steps may still use the old memory
    CCLAB_CUDA_CHECK(cudaStreamSynchronize(lane()));
  }
  constexpr std::size_t kRound = 1 << 20;  // grow in MiB steps, not one allocation per size
  mem = DeviceMemory(device_, (bytes + kRound - 1) / kRound * kRound);
  return mem.get();
}

void* RankState::scratch(std::size_t bytes) { return bytes ? grow(scratch_, bytes) : scratch_.get(); }
void* RankState::staging(std::size_t bytes) { return bytes ? grow(staging_, bytes) : staging_.get(); }

CudaContext::CudaContext(int nranks, bool shareStreamPerDevice)
    : map_(nranks, devicesOrThrow()), devices_(map_.devicesUsed()) {
  ranks_.reserve(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    const int d = map_.device(r);  // ranks 0..D-1 are the first rank of each device (round-robin)
    const cudaStream_t shared = shareStreamPerDevice && r >= map_.devicesUsed() ? ranks_[static_cast<std::size_t>(d)].lane() : nullptr;
    ranks_.emplace_back(r, d, shared);
  }
}

}  // namespace cclab::cuda
