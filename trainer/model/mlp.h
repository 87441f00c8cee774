// A multi-layer perceptron: Linear -> ReLU -> ... -> Linear (logits), float32, through CBLAS.
// Forward: A_{l+1} = relu(A_l W_l^T + b_l) (no ReLU on the last layer).
// Backward from dL/dlogits: dW_l += dZ_l^T A_l, db_l += colsum(dZ_l), dA_l = dZ_l W_l, then the ReLU mask.
// Gradients accumulate (+=), so k micro-batches sum into one gradient.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "trainer/model/layout.h"

namespace cclab::trainer {

// Activations and gradient scratch for batches up to maxBatch rows. One per thread.
class MlpWorkspace {
 public:
  MlpWorkspace(const ParameterLayout& layout, std::int64_t maxBatch);
  [[nodiscard]] std::int64_t maxBatch() const { return maxBatch_; }
  [[nodiscard]] std::span<float> input() { return activations_.front(); }
  [[nodiscard]] std::span<float> activation(int i) { return activations_[static_cast<std::size_t>(i)]; }
  [[nodiscard]] std::span<float> gradient(int parity) { return gradients_[static_cast<std::size_t>(parity)]; }

 private:
  std::int64_t maxBatch_;
  std::vector<std::vector<float>> activations_;  // [0] = input, [l+1] = output of layer l
  std::vector<std::vector<float>> gradients_;    // two buffers, alternating by layer
};

// Called after layer l's parameter gradients are final (l from the last layer down to 0).
using LayerDoneFn = std::function<void(int layer)>;

class Mlp {
 public:
  explicit Mlp(ParameterLayout layout) : layout_(std::move(layout)) {}
  [[nodiscard]] const ParameterLayout& layout() const { return layout_; }

  // He (Kaiming) normal weights N(0, 2/in), zero biases; deterministic in seed.
  void initialize(std::span<float> params, std::uint64_t seed) const;

  // Forward pass over ws.input()'s first `batch` rows; returns the logits (batch x classes).
  std::span<float> forward(std::span<const float> params, std::int64_t batch, MlpWorkspace& ws) const;

  // Backward pass; dLogits (batch x classes) is read from logitGradient(ws) (see there). Adds to grads.
  void backward(std::span<const float> params, std::int64_t batch, MlpWorkspace& ws, std::span<float> grads,
                const LayerDoneFn& onLayerDone = {}) const;

  // Where the loss writes dL/dlogits before backward().
  [[nodiscard]] std::span<float> logitGradient(MlpWorkspace& ws) const;

 private:
  ParameterLayout layout_;
};

}  // namespace cclab::trainer
