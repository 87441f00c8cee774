#include "collectives/cuda/cuda_resources.h"

#include <cstring>

#include "collectives/cuda/cuda_check.h"

namespace cclab::cuda {

DeviceGuard::DeviceGuard(int device) {
  CCLAB_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) CCLAB_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) CCLAB_CUDA_WARN(cudaSetDevice(previous_));
}

namespace {
// Release on the owning device; never throws.
template <class F>
void onDevice(int device, F&& release) noexcept {
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
  if (device >= 0 && previous != device) CCLAB_CUDA_WARN(cudaSetDevice(device));
  release();
  if (previous >= 0 && previous != device) CCLAB_CUDA_WARN(cudaSetDevice(previous));
}
}  // namespace

void StreamTraits::destroy(int device, cudaStream_t s) noexcept {
  onDevice(device, [&] { CCLAB_CUDA_WARN(cudaStreamDestroy(s)); });
}
void EventTraits::destroy(int device, cudaEvent_t e) noexcept {
  onDevice(device, [&] { CCLAB_CUDA_WARN(cudaEventDestroy(e)); });
}
void DeviceMemoryTraits::destroy(int device, void* p) noexcept {
  onDevice(device, [&] { CCLAB_CUDA_WARN(cudaFree(p)); });
}
void HostMemoryTraits::destroy(int device, void* p) noexcept {
  onDevice(device, [&] { CCLAB_CUDA_WARN(cudaFreeHost(p)); });
}
void GraphTraits::destroy(int device, cudaGraph_t g) noexcept {
  onDevice(device, [&] { CCLAB_CUDA_WARN(cudaGraphDestroy(g)); });
}
void GraphExecTraits::destroy(int device, cudaGraphExec_t g) noexcept {
  onDevice(device, [&] { CCLAB_CUDA_WARN(cudaGraphExecDestroy(g)); });
}

Stream makeStream(int device) {
  DeviceGuard guard(device);
  cudaStream_t s = nullptr;
  CCLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(device, s);
}

Event makeEvent(int device, bool timing) {
  DeviceGuard guard(device);
  cudaEvent_t e = nullptr;
  CCLAB_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return Event(device, e);
}

DeviceMemory::DeviceMemory(int device, std::size_t bytes) : bytes_(bytes) {
  DeviceGuard guard(device);
  void* p = nullptr;
  if (bytes > 0) CCLAB_CUDA_CHECK(cudaMalloc(&p, bytes));
  mem_ = Owned<void*, DeviceMemoryTraits>(device, p);
}

MappedHostMemory::MappedHostMemory(int device, std::size_t bytes) {
  DeviceGuard guard(device);
  void* p = nullptr;
  CCLAB_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  mem_ = Owned<void*, HostMemoryTraits>(device, p);
  std::memset(p, 0, bytes);
  CCLAB_CUDA_CHECK(cudaHostGetDevicePointer(&device_, p, 0));
}

}  // namespace cclab::cuda
