#include "trainer/model/sgd.h"

#include <cmath>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::trainer {

Sgd::Sgd(SgdConfig config, std::int64_t parameters) : config_(config), velocity_(static_cast<std::size_t>(parameters)) {
  if (!(config.lr > 0.0F) || !std::isfinite(config.lr)) throw InvalidArgument("learning rate must be finite and > 0");
  if (!(config.momentum >= 0.0F && config.momentum < 1.0F)) throw InvalidArgument("momentum must be in [0, 1)");
  if (!(config.weightDecay >= 0.0F) || !std::isfinite(config.weightDecay))
    throw InvalidArgument("weight decay must be finite and >= 0");
}

void Sgd::step(std::span<float> params, std::span<const float> grads, float gradScale) {
  if (params.size() != velocity_.size() || grads.size() != velocity_.size())
    throw InvalidArgument("Sgd::step: " + std::to_string(params.size()) + " parameters, optimiser has " +
                          std::to_string(velocity_.size()));
  const float lr = config_.lr;
  const float mu = config_.momentum;
  const float wd = config_.weightDecay;
  float* w = params.data();
  const float* g = grads.data();
  float* v = velocity_.data();
  for (std::size_t i = 0; i < velocity_.size(); ++i) {
    const float d = g[i] * gradScale + wd * w[i];
    v[i] = mu * v[i] + d;
    w[i] -= lr * v[i];
  }
}

}  // namespace cclab::trainer
