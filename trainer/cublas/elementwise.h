// The per-element (and per-column) arithmetic of the device path's small kernels, written once for
// both sides: the CUDA kernels (cublas_kernels.cu) call these functions from one thread per element
// or column, and the CPU reference (interpret.cc) calls the same functions in a loop. The CPU twins
// are tested against the CPU model's own code (Mlp, Sgd, softmaxCrossEntropy), so the kernels compute
// what the CPU path computes, up to the device's float contraction (nvcc fuses a·b + c by default).
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define CCLAB_HD __host__ __device__
#else
#define CCLAB_HD
#endif

namespace cclab::trainer::cublas {

CCLAB_HD inline float reluOf(float z) { return z > 0.0F ? z : 0.0F; }

// dA masked by the ReLU of the forward pass: zero where the activation was not positive.
CCLAB_HD inline float reluMasked(float da, float a) { return a <= 0.0F ? 0.0F : da; }

// db[i] + sum over the n columns of dz's row i (column-major, leading dimension ld), in column order,
// accumulated in float as the CPU Mlp does.
CCLAB_HD inline float biasGradRow(float db, const float* dz, std::int64_t i, std::int64_t n, std::int64_t ld) {
  float acc = db;
  for (std::int64_t j = 0; j < n; ++j) acc += dz[i + j * ld];
  return acc;
}

// torch.optim.SGD (dampening 0, no Nesterov) on one element: d = g·scale + wd·w; v = mu·v + d; w -= lr·v.
CCLAB_HD inline void sgdElement(float& w, float& v, float g, float scale, float lr, float mu, float wd) {
  const float d = g * scale + wd * w;
  v = mu * v + d;
  w -= lr * v;
}

struct XentRow {
  double loss = 0.0;  // -log softmax(z)[label]
  int correct = 0;    // 1 when the first arg-max is the label
};

// One sample's softmax cross-entropy over `classes` logits z (contiguous), stably (max subtracted,
// sums in double); g (may be null) receives (softmax - onehot)·scale.
CCLAB_HD inline XentRow softmaxXentRow(const float* z, std::int64_t classes, int label, float scale, float* g) {
  std::int64_t best = 0;
  for (std::int64_t j = 1; j < classes; ++j)
    if (z[j] > z[best]) best = j;
  const float zmax = z[best];
  double sum = 0.0;
  for (std::int64_t j = 0; j < classes; ++j) sum += exp(static_cast<double>(z[j] - zmax));
  XentRow r;
  r.loss = log(sum) - static_cast<double>(z[label] - zmax);
  r.correct = best == label ? 1 : 0;
  if (g != nullptr)
    for (std::int64_t j = 0; j < classes; ++j) {
      const double p = exp(static_cast<double>(z[j] - zmax)) / sum;
      g[j] = static_cast<float>(p - (j == label ? 1.0 : 0.0)) * scale;
    }
  return r;
}

}  // namespace cclab::trainer::cublas
