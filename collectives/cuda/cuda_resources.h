// RAII owners of CUDA resources. Each is move-only, creates its resource on a given device, and
// releases it in its destructor without throwing (a failure there is printed, CCLAB_CUDA_WARN).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace cclab::cuda {

// Makes `device` current for its lifetime, then restores the previous device.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Owns one handle; Traits::destroy(device, handle) releases it.
template <class Handle, class Traits>
class Owned {
 public:
  Owned() = default;
  Owned(int device, Handle h) : device_(device), handle_(h) {}
  Owned(Owned&& o) noexcept : device_(o.device_), handle_(std::exchange(o.handle_, Handle{})) {}
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      reset();
      device_ = o.device_;
      handle_ = std::exchange(o.handle_, Handle{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  [[nodiscard]] Handle get() const { return handle_; }
  [[nodiscard]] int device() const { return device_; }
  explicit operator bool() const { return handle_ != Handle{}; }
  void reset() noexcept {
    if (handle_ != Handle{}) Traits::destroy(device_, handle_);
    handle_ = Handle{};
  }

 private:
  int device_ = -1;
  Handle handle_{};
};

struct StreamTraits {
  static void destroy(int device, cudaStream_t s) noexcept;
};
struct EventTraits {
  static void destroy(int device, cudaEvent_t e) noexcept;
};
struct DeviceMemoryTraits {
  static void destroy(int device, void* p) noexcept;
};
struct HostMemoryTraits {
  static void destroy(int device, void* p) noexcept;
};
struct GraphTraits {
  static void destroy(int device, cudaGraph_t g) noexcept;
};
struct GraphExecTraits {
  static void destroy(int device, cudaGraphExec_t g) noexcept;
};

using Stream = Owned<cudaStream_t, StreamTraits>;
using Event = Owned<cudaEvent_t, EventTraits>;
using Graph = Owned<cudaGraph_t, GraphTraits>;
using GraphExec = Owned<cudaGraphExec_t, GraphExecTraits>;

Stream makeStream(int device);                     // non-blocking: no implicit sync with the legacy stream
Event makeEvent(int device, bool timing = false);  // without timing unless asked (cheaper)

class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(int device, std::size_t bytes);  // cudaMalloc on `device`
  [[nodiscard]] void* get() const { return mem_.get(); }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }
  [[nodiscard]] int device() const { return mem_.device(); }

 private:
  Owned<void*, DeviceMemoryTraits> mem_;
  std::size_t bytes_ = 0;
};

// Pinned host memory mapped into the device address space (cudaHostAllocMapped): the device writes
// it, the host reads it without a copy.
class MappedHostMemory {
 public:
  MappedHostMemory() = default;
  MappedHostMemory(int device, std::size_t bytes);  // zero-filled
  [[nodiscard]] void* host() const { return mem_.get(); }
  [[nodiscard]] void* deviceView() const { return device_; }

 private:
  Owned<void*, HostMemoryTraits> mem_;
  void* device_ = nullptr;
};

}  // namespace cclab::cuda
