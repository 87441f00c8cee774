// The CUDA device of the multi-process CUDA backend (collectives/gpu_proc/cuda_proc_device.h) in one
// process: device memory and its IPC handle, copies both ways, reduce-copies from device memory and
// from mapped pinned host memory (how staged slices are read), Avg's division, zeroing. Importing a
// handle needs another process (CUDA refuses the exporting one): scripts/gpu_check's
// GPUs-in-processes steps do that under mpirun. Skips with a message without a GPU (gpu_required.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "collectives/gpu_proc/cuda_proc_device.h"
#include "tests/cuda/gpu_required.h"

namespace cclab::cuda {
namespace {

TEST(CudaProcDevice, MemoryHandlesCopiesAndReduceCopies) {
  CCLAB_REQUIRE_GPU();
  auto dev = makeCudaProcDevice(0);
  EXPECT_EQ(dev->id().rfind("GPU-", 0), 0U) << dev->id();
  const std::int64_t n = 100003;  // odd: the kernels' scalar head and tail run
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  void* a = dev->allocate(bytes);
  void* b = dev->allocate(bytes);
  const IpcHandle h = dev->exportMemory(a);
  EXPECT_TRUE(std::any_of(h.begin(), h.end(), [](std::byte x) { return x != std::byte{0}; })) << "an IPC handle";
  std::vector<float> x(static_cast<std::size_t>(n)), y(x.size()), got(x.size());
  for (std::int64_t i = 0; i < n; ++i) {
    x[static_cast<std::size_t>(i)] = static_cast<float>(i % 97) - 48;
    y[static_cast<std::size_t>(i)] = static_cast<float>((i * 7) % 31) - 15;
  }
  dev->copy(a, x.data(), bytes);
  auto* pinned = static_cast<float*>(dev->allocatePinned(bytes));
  std::copy(y.begin(), y.end(), pinned);
  dev->reduceCopy(DataType::Float32, ReduceOp::Sum, b, a, pinned, n);  // b = a + pinned (read over the bus)
  dev->copy(got.data(), b, bytes);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], x[static_cast<std::size_t>(i)] + y[static_cast<std::size_t>(i)]) << i;
  dev->reduceCopy(DataType::Float32, ReduceOp::Sum, b, nullptr, a, n);  // a copy
  dev->finishAvg(DataType::Float32, b, n, 2);
  dev->copy(pinned, b, bytes);  // device -> pinned, as a staged send
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(pinned[i], x[static_cast<std::size_t>(i)] / 2) << i;
  dev->zero(b, bytes);
  dev->copy(got.data(), b, bytes);
  EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](float v) { return v == 0; }));
  dev->releasePinned(pinned);
  dev->release(a);
  dev->release(b);
}

}  // namespace
}  // namespace cclab::cuda
