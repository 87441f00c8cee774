#include "collectives/gpu_proc/cuda_proc_device.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "collectives/core/errors.h"
#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/cuda_resources.h"
#include "collectives/cuda/kernels.h"
#include "collectives/cuda/launch_geometry.h"

namespace cclab::cuda {
namespace {

static_assert(sizeof(cudaIpcMemHandle_t) == kIpcHandleBytes, "an IPC handle travels as kIpcHandleBytes bytes");
static_assert(sizeof(cudaIpcEventHandle_t) == kIpcHandleBytes, "an IPC event handle travels as kIpcHandleBytes bytes");

constexpr auto kDrainTimeout = std::chrono::seconds(60);  // one step of a call; the call's own waits are shorter

class CudaProcDevice final : public ProcDevice {
 public:
  explicit CudaProcDevice(int ordinal) : ordinal_(ordinal) {
    CCLAB_CUDA_CHECK(cudaSetDevice(ordinal));
    cudaDeviceProp prop{};
    CCLAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
    sms_ = prop.multiProcessorCount;
    name_ = prop.name;
    char id[64];
    const auto* u = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
    std::snprintf(id, sizeof(id), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
                  u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    id_ = id;
    stream_ = makeStream(ordinal);
  }

  std::string id() const override { return id_; }
  std::string describe() const override {
    return name_ + " (device " + std::to_string(ordinal_) + ", " + std::to_string(sms_) + " SMs, " + id_ + ")";
  }
  void* allocate(std::size_t bytes) override {
    DeviceGuard g(ordinal_);
    void* p = nullptr;
    CCLAB_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  void release(void* p) noexcept override { DeviceMemoryTraits::destroy(ordinal_, p); }
  IpcHandle exportMemory(void* allocation) override {
    DeviceGuard g(ordinal_);
    cudaIpcMemHandle_t h{};
    CCLAB_CUDA_CHECK(cudaIpcGetMemHandle(&h, allocation));
    IpcHandle out{};
    std::memcpy(out.data(), &h, out.size());
    return out;
  }
  void* importMemory(const IpcHandle& handle) override {
    DeviceGuard g(ordinal_);
    cudaIpcMemHandle_t h{};
    std::memcpy(&h, handle.data(), handle.size());
    void* p = nullptr;
    CCLAB_CUDA_CHECK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
    return p;
  }
  void closeImported(void* p) noexcept override {
    DeviceGuard g(ordinal_);
    CCLAB_CUDA_WARN(cudaIpcCloseMemHandle(p));
  }
  void* allocatePinned(std::size_t bytes) override {
    DeviceGuard g(ordinal_);
    void* p = nullptr;
    CCLAB_CUDA_CHECK(cudaHostAlloc(&p, std::max<std::size_t>(bytes, 1), cudaHostAllocPortable | cudaHostAllocMapped));
    return p;
  }
  void releasePinned(void* p) noexcept override { HostMemoryTraits::destroy(ordinal_, p); }
  void reduceCopy(DataType type, ReduceOp op, void* dst, const void* local, const void* src, std::int64_t count) override {
    if (count <= 0) return;
    DeviceGuard g(ordinal_);
    const auto bytes = static_cast<std::int64_t>(sizeOf(type)) * count;
    launchReduceCopy(stream_.get(), type, op, {dst, local, src, count}, reduceCopyGeometry(bytes, sms_, 1));
    drain("reduce-copy");
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return;
    DeviceGuard g(ordinal_);
    CCLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_.get()));
    drain("copy");
  }
  void zero(void* dst, std::size_t bytes) override {
    if (bytes == 0) return;
    DeviceGuard g(ordinal_);
    CCLAB_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream_.get()));
    drain("memset");
  }
  void finishAvg(DataType type, void* data, std::int64_t count, int nranks) override {
    if (count <= 0) return;
    DeviceGuard g(ordinal_);
    const auto bytes = static_cast<std::int64_t>(sizeOf(type)) * count;
    launchFinishAvg(stream_.get(), type, data, count, nranks, reduceCopyGeometry(bytes, sms_, 1));
    drain("avg");
  }

 private:
  void drain(const char* what) {
    const auto deadline = std::chrono::steady_clock::now() + kDrainTimeout;
    for (int polls = 0;; ++polls) {
      const cudaError_t s = cudaStreamQuery(stream_.get());
      if (s == cudaSuccess) return;
      if (s != cudaErrorNotReady) CCLAB_CUDA_CHECK(s);
      if (std::chrono::steady_clock::now() > deadline)
        throw TimeoutError(std::string("cuda proc: a ") + what + " on device " + std::to_string(ordinal_) + " did not finish within " +
                           std::to_string(kDrainTimeout.count()) + " s");
      constexpr int kSpinPolls = 10000;  // poll hard first (latency), then let the cores go
      if (polls > kSpinPolls) std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  int ordinal_;
  int sms_ = 1;
  std::string name_, id_;
  Stream stream_;
};

}  // namespace

std::unique_ptr<ProcDevice> makeCudaProcDevice(int ordinal) { return std::make_unique<CudaProcDevice>(ordinal); }

}  // namespace cclab::cuda
