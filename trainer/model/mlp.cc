#include "trainer/model/mlp.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "collectives/core/errors.h"

namespace cclab::trainer {
namespace {

constexpr float kHeGain = 2.0F;  // He et al. 2015: Var(W) = 2 / fan_in for ReLU layers

int blasInt(std::int64_t v) { return static_cast<int>(v); }

}  // namespace

MlpWorkspace::MlpWorkspace(const ParameterLayout& layout, std::int64_t maxBatch) : maxBatch_(maxBatch) {
  if (maxBatch < 1) throw InvalidArgument("MlpWorkspace: maxBatch must be >= 1");
  for (std::int64_t w : layout.widths()) activations_.emplace_back(static_cast<std::size_t>(maxBatch * w));
  for (int i = 0; i < 2; ++i) gradients_.emplace_back(static_cast<std::size_t>(maxBatch * layout.maxWidth()));
}

void Mlp::initialize(std::span<float> params, std::uint64_t seed) const {
  if (static_cast<std::int64_t>(params.size()) != layout_.parameterCount())
    throw InvalidArgument("Mlp::initialize: parameter vector has the wrong size");
  std::mt19937_64 rng(seed);
  for (int l = 0; l < layout_.layerCount(); ++l) {
    const LayerSlice& s = layout_.layer(l);
    std::normal_distribution<float> dist(0.0F, std::sqrt(kHeGain / static_cast<float>(s.in)));
    for (std::int64_t i = 0; i < s.in * s.out; ++i) params[static_cast<std::size_t>(s.weightOffset + i)] = dist(rng);
    std::fill_n(params.begin() + s.biasOffset, s.out, 0.0F);
  }
}

std::span<float> Mlp::forward(std::span<const float> params, std::int64_t batch, MlpWorkspace& ws) const {
  if (batch < 1 || batch > ws.maxBatch()) throw InvalidArgument("Mlp::forward: batch outside the workspace");
  const int last = layout_.layerCount() - 1;
  for (int l = 0; l <= last; ++l) {
    const LayerSlice& s = layout_.layer(l);
    const float* a = ws.activation(l).data();
    float* z = ws.activation(l + 1).data();
    const float* w = params.data() + s.weightOffset;
    const float* b = params.data() + s.biasOffset;
    for (std::int64_t r = 0; r < batch; ++r) std::copy_n(b, s.out, z + r * s.out);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasInt(batch), blasInt(s.out), blasInt(s.in), 1.0F, a,
                blasInt(s.in), w, blasInt(s.in), 1.0F, z, blasInt(s.out));
    if (l != last)
      for (std::int64_t i = 0; i < batch * s.out; ++i) z[i] = std::max(z[i], 0.0F);
  }
  return ws.activation(last + 1).subspan(0, static_cast<std::size_t>(batch * layout_.classes()));
}

std::span<float> Mlp::logitGradient(MlpWorkspace& ws) const {
  return ws.gradient((layout_.layerCount() - 1) % 2);
}

void Mlp::backward(std::span<const float> params, std::int64_t batch, MlpWorkspace& ws, std::span<float> grads,
                   const LayerDoneFn& onLayerDone) const {
  for (int l = layout_.layerCount() - 1; l >= 0; --l) {
    const LayerSlice& s = layout_.layer(l);
    const float* dz = ws.gradient(l % 2).data();  // dL/dZ_l, batch x out
    const float* a = ws.activation(l).data();     // A_l, batch x in
    float* dw = grads.data() + s.weightOffset;
    float* db = grads.data() + s.biasOffset;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blasInt(s.out), blasInt(s.in), blasInt(batch), 1.0F, dz,
                blasInt(s.out), a, blasInt(s.in), 1.0F, dw, blasInt(s.in));
    for (std::int64_t r = 0; r < batch; ++r)
      for (std::int64_t j = 0; j < s.out; ++j) db[j] += dz[r * s.out + j];
    if (l > 0) {
      float* da = ws.gradient((l - 1) % 2).data();  // becomes dL/dZ_{l-1} after the ReLU mask
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasInt(batch), blasInt(s.in), blasInt(s.out), 1.0F, dz,
                  blasInt(s.out), params.data() + s.weightOffset, blasInt(s.in), 0.0F, da, blasInt(s.in));
      for (std::int64_t i = 0; i < batch * s.in; ++i)
        if (a[i] <= 0.0F) da[i] = 0.0F;
    }
    if (onLayerDone) onLayerDone(l);
  }
}

}  // namespace cclab::trainer
