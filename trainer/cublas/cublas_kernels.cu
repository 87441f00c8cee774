#include "trainer/cublas/cublas_kernels.h"

#include <algorithm>

#include "collectives/cuda/cuda_check.h"
#include "trainer/cublas/elementwise.h"

namespace cclab::trainer::cublas::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;  // grid-stride loops cover the rest

int blocksFor(std::int64_t n) { return static_cast<int>(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks)); }

// Grid-stride over the m x n elements, column-major: element e is (e % m, e / m).
template <class F>
__global__ void forEachElement(std::int64_t m, std::int64_t n, F f) {
  const std::int64_t total = m * n;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    f(e % m, e / m);
}

template <class F>
void launch(cudaStream_t s, std::int64_t m, std::int64_t n, F f) {
  if (m <= 0 || n <= 0) return;
  forEachElement<<<blocksFor(m * n), kThreads, 0, s>>>(m, n, f);
  CCLAB_CUDA_CHECK_LAUNCH();
}

}  // namespace

void biasRows(cudaStream_t s, float* c, std::int64_t ldc, const float* bias, std::int64_t m, std::int64_t n) {
  launch(s, m, n, [=] __device__(std::int64_t i, std::int64_t j) { c[i + j * ldc] = bias[i]; });
}

void relu(cudaStream_t s, float* c, std::int64_t ldc, std::int64_t m, std::int64_t n) {
  launch(s, m, n, [=] __device__(std::int64_t i, std::int64_t j) { c[i + j * ldc] = reluOf(c[i + j * ldc]); });
}

void reluMask(cudaStream_t s, float* c, std::int64_t ldc, const float* a, std::int64_t lda, std::int64_t m, std::int64_t n) {
  launch(s, m, n, [=] __device__(std::int64_t i, std::int64_t j) {
    c[i + j * ldc] = reluMasked(c[i + j * ldc], a[i + j * lda]);
  });
}

void biasGrad(cudaStream_t s, float* db, const float* dz, std::int64_t ldz, std::int64_t m, std::int64_t n) {
  // One thread per row, summing its n columns in order (the CPU twin's order).
  launch(s, m, 1, [=] __device__(std::int64_t i, std::int64_t) { db[i] = biasGradRow(db[i], dz, i, n, ldz); });
}

void softmaxXent(cudaStream_t s, const float* z, std::int64_t ldz, const int* labels, float* g, std::int64_t ldg,
                 std::int64_t classes, std::int64_t samples, float scale, double* lossRows, int* correct) {
  // One thread per sample (column).
  launch(s, samples, 1, [=] __device__(std::int64_t j, std::int64_t) {
    if (labels[j] < 0 || labels[j] >= classes) {  // never read outside the logits: the loss says it
      lossRows[j] = nan("");
      correct[j] = 0;
      return;
    }
    const XentRow r = softmaxXentRow(z + j * ldz, classes, labels[j], scale, g + j * ldg);
    lossRows[j] = r.loss;
    correct[j] = r.correct;
  });
}

void sgd(cudaStream_t s, float* w, float* v, const float* g, std::int64_t n, float scale, float lr, float mu, float wd) {
  launch(s, n, 1, [=] __device__(std::int64_t i, std::int64_t) { sgdElement(w[i], v[i], g[i], scale, lr, mu, wd); });
}

namespace {

__device__ unsigned long long globalTimerNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spinKernel(unsigned long long ns) {
  const unsigned long long start = globalTimerNs();
  while (globalTimerNs() - start < ns) __nanosleep(1000);
}

}  // namespace

void spin(cudaStream_t s, std::int64_t ns) {
  if (ns <= 0) return;
  spinKernel<<<1, 1, 0, s>>>(static_cast<unsigned long long>(ns));
  CCLAB_CUDA_CHECK_LAUNCH();
}

}  // namespace cclab::trainer::cublas::kernels
