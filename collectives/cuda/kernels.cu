// Standalone kernels: reduce-copy (one per type x op, one byte-wise copy), Avg's division, and the
// straggler's spin. The events and graph orderings launch one reduce-copy per step.
#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/kernels.h"
#include "collectives/cuda/reduce_copy.cuh"

namespace cclab::cuda {
namespace {

template <class E, class Op, bool kReduce>
__global__ void __launch_bounds__(kThreads) reduceCopyKernel(const ReduceCopyArgs a) {
  using S = typename E::Storage;
  const std::int64_t worker = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::int64_t nworkers = std::int64_t{gridDim.x} * blockDim.x;
  device::reduceCopy<E, Op, kReduce>(static_cast<S*>(a.dst), static_cast<const S*>(a.local),
                                     static_cast<const S*>(a.src), a.count, worker, nworkers);
}

template <class E>
__global__ void __launch_bounds__(kThreads) finishAvgKernel(typename E::Storage* data, std::int64_t n, int nranks) {
  using C = typename E::Compute;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    data[i] = E::fromCompute(E::toCompute(data[i]) / static_cast<C>(nranks));
}

__device__ std::uint64_t globalTimer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spinKernel(std::uint64_t nanoseconds) {
  const std::uint64_t start = globalTimer();
  while (globalTimer() - start < nanoseconds) __nanosleep(256);
}

}  // namespace

void launchReduceCopy(cudaStream_t stream, DataType type, ReduceOp op, const ReduceCopyArgs& args, LaunchGeometry grid) {
  if (grid.blocks <= 0 || args.count <= 0) return;
  if (!args.local) {
    ReduceCopyArgs bytes = args;
    bytes.count = args.count * static_cast<std::int64_t>(sizeOf(type));
    reduceCopyKernel<device::UInt8Elem, device::SumOp, false><<<grid.blocks, grid.threads, 0, stream>>>(bytes);
    CCLAB_CUDA_CHECK_LAUNCH();
    return;
  }
  device::dispatchType(type, [&](auto elem) {
    device::dispatchOp(op, [&](auto opTag) {
      using E = decltype(elem);
      using Op = decltype(opTag);
      reduceCopyKernel<E, Op, true><<<grid.blocks, grid.threads, 0, stream>>>(args);
      CCLAB_CUDA_CHECK_LAUNCH();
    });
  });
}

void launchFinishAvg(cudaStream_t stream, DataType type, void* data, std::int64_t count, int nranks, LaunchGeometry grid) {
  if (grid.blocks <= 0 || count <= 0) return;
  device::dispatchType(type, [&](auto elem) {
    using E = decltype(elem);
    finishAvgKernel<E><<<grid.blocks, grid.threads, 0, stream>>>(static_cast<typename E::Storage*>(data), count, nranks);
    CCLAB_CUDA_CHECK_LAUNCH();
  });
}

void launchSpin(cudaStream_t stream, std::uint64_t nanoseconds) {
  if (nanoseconds == 0) return;
  spinKernel<<<1, 1, 0, stream>>>(nanoseconds);
  CCLAB_CUDA_CHECK_LAUNCH();
}

}  // namespace cclab::cuda
