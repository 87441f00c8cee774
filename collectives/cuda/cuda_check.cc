#include "collectives/cuda/cuda_check.h"

#include <cstdio>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::cuda {
namespace {

std::string describe(cudaError_t status, const char* call, const char* file, int line) {
  return std::string(call) + " failed: " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ") at " +
         file + ":" + std::to_string(line);
}

}  // namespace

void throwCudaError(cudaError_t status, const char* call, const char* file, int line) {
  throw CudaError(describe(status, call, file, line));
}

void warnCudaError(cudaError_t status, const char* call, const char* file, int line) noexcept {
  try {
    std::fprintf(stderr, "cclab cuda: warning: %s\n", describe(status, call, file, line).c_str());
  } catch (...) {  // a warning must never throw
  }
}

}  // namespace cclab::cuda
