// SGD with momentum and weight decay, as torch.optim.SGD (dampening 0, no Nesterov):
//   d = g * gradScale + weightDecay * w;   v = momentum * v + d;   w -= lr * v
// gradScale folds the data-parallel average (1/N after a sum allreduce) into the update.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace cclab::trainer {

struct SgdConfig {
  float lr = 0.05F;
  float momentum = 0.9F;
  float weightDecay = 1e-4F;
};

class Sgd {
 public:
  Sgd(SgdConfig config, std::int64_t parameters);  // throws InvalidArgument for lr <= 0 etc.
  [[nodiscard]] const SgdConfig& config() const { return config_; }
  void step(std::span<float> params, std::span<const float> grads, float gradScale);

 private:
  SgdConfig config_;
  std::vector<float> velocity_;
};

}  // namespace cclab::trainer
