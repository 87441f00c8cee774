// What the multi-process CUDA executor (collectives/gpu_proc/gpu_proc_executor.h) needs from a device:
// memory that peers of the node can import by a 64-byte handle (CUDA IPC), host memory the device
// reads and writes (pinned, for the staging between nodes), and synchronous reduce-copies. The CUDA
// implementation is cuda::makeCudaProcDevice (cuda_proc_device.h, cudaIpcGetMemHandle /
// cudaIpcOpenMemHandle, the reduce-copy kernels); the MPI tests run the same executor on a host
// stand-in whose "IPC handles" name shared-memory segments, so the protocol is tested on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "collectives/core/dtype.h"
#include "collectives/gpu_proc/ipc_exchange.h"

namespace cclab::cuda {

class ProcDevice {
 public:
  virtual ~ProcDevice() = default;
  // The physical device ("GPU-<uuid>"): processes with equal ids share one GPU.
  [[nodiscard]] virtual std::string id() const = 0;
  [[nodiscard]] virtual std::string describe() const = 0;
  // Device memory that peers can import (one allocation per call: IPC handles name allocations).
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* allocation) noexcept = 0;
  virtual IpcHandle exportMemory(void* allocation) = 0;
  // A peer process's allocation mapped here; closed with closeImported.
  virtual void* importMemory(const IpcHandle& handle) = 0;
  virtual void closeImported(void* mapped) noexcept = 0;
  // Host memory the device reads and writes directly (the staging between nodes).
  virtual void* allocatePinned(std::size_t bytes) = 0;
  virtual void releasePinned(void* p) noexcept = 0;
  // Each returns when the device is done (bounded by the device's own timeout).
  // dst[i] = local[i] (op) src[i]; local == nullptr: dst[i] = src[i] (a copy of count elements).
  virtual void reduceCopy(DataType type, ReduceOp op, void* dst, const void* local, const void* src, std::int64_t count) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;  // any direction
  virtual void zero(void* dst, std::size_t bytes) = 0;
  virtual void finishAvg(DataType type, void* data, std::int64_t count, int nranks) = 0;
};

}  // namespace cclab::cuda
