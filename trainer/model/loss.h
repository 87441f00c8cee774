// Softmax cross-entropy over a batch of logits, computed stably (max subtracted, sums in double).
#pragma once

#include <cstdint>
#include <span>

namespace cclab::trainer {

struct LossResult {
  double lossSum = 0.0;      // sum over the batch of -log softmax(logits)[label]
  std::int64_t correct = 0;  // rows whose arg-max is the label
};

// When dLogits is non-empty it receives (softmax - onehot) * gradScale (gradScale = 1/B gives the
// gradient of the mean loss).
LossResult softmaxCrossEntropy(std::span<const float> logits, std::span<const int> labels, std::int64_t classes,
                               float gradScale, std::span<float> dLogits);

}  // namespace cclab::trainer
