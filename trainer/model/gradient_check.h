// Gradient check: the backward pass against central finite differences of the mean loss,
// (L(w + eps e_i) - L(w - eps e_i)) / 2 eps, on a sample of parameters from every layer.
#pragma once

#include <cstdint>
#include <span>

#include "trainer/data/dataset.h"
#include "trainer/model/mlp.h"

namespace cclab::trainer {

struct GradientCheckConfig {
  std::int64_t batch = 8;                // samples from the front of the dataset
  std::int64_t parametersPerLayer = 24;  // weights and biases checked per layer (evenly spread)
  // float32 loss: small steps drown in rounding (3e-4: ~2% error), large ones cross ReLU kinks
  // (1e-2: ~2%); 3e-3 gives ~0.2% on the test's model.
  double epsilon = 3e-3;
};

struct GradientCheckResult {
  double maxError = 0.0;          // max |analytic - numeric| / max(|analytic| + |numeric|, kGradientFloor)
  std::int64_t worstParameter = -1;
  std::int64_t checked = 0;
};

// Gradients below this magnitude are compared absolutely (their finite difference is float noise).
inline constexpr double kGradientFloor = 1e-3;

GradientCheckResult checkGradients(const Mlp& model, std::span<const float> params, const Dataset& data,
                                   const GradientCheckConfig& config);

}  // namespace cclab::trainer
