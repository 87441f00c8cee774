// Host entry points of the standalone kernels (kernels.cu). Plain C++: callable from .cc files.
// Every launcher checks the launch (CCLAB_CUDA_CHECK_LAUNCH) and takes its device arguments as a
// trivially copyable handle, passed by value into the kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "collectives/core/dtype.h"
#include "collectives/cuda/launch_geometry.h"

namespace cclab::cuda {

// dst[i] = local[i] (op) src[i] for i < count (elements); local == nullptr: dst[i] = src[i].
// src may be a peer device's memory (peer access) or this device's.
struct ReduceCopyArgs {
  void* dst = nullptr;
  const void* local = nullptr;
  const void* src = nullptr;
  std::int64_t count = 0;
};
static_assert(std::is_trivially_copyable_v<ReduceCopyArgs>);

// Grid: reduceCopyGeometry(bytes, ...). A copy runs one byte-wise kernel for every type.
void launchReduceCopy(cudaStream_t stream, DataType type, ReduceOp op, const ReduceCopyArgs& args, LaunchGeometry grid);

// Avg's last step, as the host's finishAvg: data[i] = data[i] / nranks.
void launchFinishAvg(cudaStream_t stream, DataType type, void* data, std::int64_t count, int nranks, LaunchGeometry grid);

// One thread that waits `nanoseconds` on %globaltimer (a time, not a cycle count): the straggler.
void launchSpin(cudaStream_t stream, std::uint64_t nanoseconds);

}  // namespace cclab::cuda
