// CCLAB_CUDA_CHECK(expr): every CUDA runtime call goes through it; a failure throws cclab::CudaError
// whose message names the call, the CUDA error, and the file and line. CCLAB_CUDA_CHECK_LAUNCH()
// follows every kernel launch (launch errors are only visible through cudaGetLastError).
// CCLAB_CUDA_WARN(expr) is for destructors and other places that must not throw: it prints one line.
#pragma once

#include <cuda_runtime_api.h>

namespace cclab::cuda {

[[noreturn]] void throwCudaError(cudaError_t status, const char* call, const char* file, int line);
void warnCudaError(cudaError_t status, const char* call, const char* file, int line) noexcept;

}  // namespace cclab::cuda

#define CCLAB_CUDA_CHECK(expr)                                                         \
  do {                                                                                 \
    const cudaError_t cclabStatus_ = (expr);                                           \
    if (cclabStatus_ != cudaSuccess)                                                   \
      ::cclab::cuda::throwCudaError(cclabStatus_, #expr, __FILE__, __LINE__);          \
  } while (false)

#define CCLAB_CUDA_CHECK_LAUNCH() CCLAB_CUDA_CHECK(cudaGetLastError())

#define CCLAB_CUDA_WARN(expr)                                                          \
  do {                                                                                 \
    const cudaError_t cclabStatus_ = (expr);                                           \
    if (cclabStatus_ != cudaSuccess)                                                   \
      ::cclab::cuda::warnCudaError(cclabStatus_, #expr, __FILE__, __LINE__);           \
  } while (false)
