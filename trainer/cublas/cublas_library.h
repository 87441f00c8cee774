// cuBLAS, loaded at run time (dlopen), as collectives/nccl loads NCCL: the GPU machines carry cuBLAS
// with the CUDA toolkit or PyTorch's packages, and a static cuBLAS would not fit the staged check.
// Which library: CCLAB_CUBLAS_LIBRARY=/path/libcublas.so.N, else libcublas.so.13, .so.12, .so on the
// loader's path. Only the five entry points below are used; their ABI is the same in cuBLAS 12 and 13.
#pragma once

#include <cublas_v2.h>

#include <string>

namespace cclab::trainer::cublas {

struct CublasApi {
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*setStream)(cublasHandle_t, cudaStream_t) = nullptr;
  cublasStatus_t (*setMathMode)(cublasHandle_t, cublasMath_t) = nullptr;
  cublasStatus_t (*sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float*,
                          const float*, int, const float*, int, const float*, float*, int) = nullptr;
  std::string origin;  // the file loaded
};

// The API, loaded once per process; nullptr with the reason in *why when cuBLAS cannot be loaded.
const CublasApi* cublasApi(std::string* why = nullptr);

}  // namespace cclab::trainer::cublas
