// Launches of the cuBLAS path's elementwise kernels on a stream (cublas_kernels.cu). Each kernel
// calls the elementwise.h function its CPU twin (interpret.cc) calls. Matrices are column-major,
// m rows x n columns, leading dimension ld. Errors: CudaError from the launch check.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace cclab::trainer::cublas::kernels {

void biasRows(cudaStream_t s, float* c, std::int64_t ldc, const float* bias, std::int64_t m, std::int64_t n);
void relu(cudaStream_t s, float* c, std::int64_t ldc, std::int64_t m, std::int64_t n);
void reluMask(cudaStream_t s, float* c, std::int64_t ldc, const float* a, std::int64_t lda, std::int64_t m, std::int64_t n);
void biasGrad(cudaStream_t s, float* db, const float* dz, std::int64_t ldz, std::int64_t m, std::int64_t n);
void softmaxXent(cudaStream_t s, const float* z, std::int64_t ldz, const int* labels, float* g, std::int64_t ldg,
                 std::int64_t classes, std::int64_t samples, float scale, double* lossRows, int* correct);
// One thread that spins for `ns` of the GPU's global timer: the stream is busy that long (--straggler).
void spin(cudaStream_t s, std::int64_t ns);
void sgd(cudaStream_t s, float* w, float* v, const float* g, std::int64_t n, float scale, float lr, float mu, float wd);

}  // namespace cclab::trainer::cublas::kernels
