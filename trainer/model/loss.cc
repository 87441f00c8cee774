#include "trainer/model/loss.h"

#include <algorithm>
#include <cmath>

namespace cclab::trainer {

LossResult softmaxCrossEntropy(std::span<const float> logits, std::span<const int> labels, std::int64_t classes,
                               float gradScale, std::span<float> dLogits) {
  LossResult r;
  const auto batch = static_cast<std::int64_t>(labels.size());
  for (std::int64_t i = 0; i < batch; ++i) {
    const float* z = logits.data() + i * classes;
    const std::int64_t best = std::max_element(z, z + classes) - z;
    const float zmax = z[best];
    double sum = 0.0;
    for (std::int64_t j = 0; j < classes; ++j) sum += std::exp(static_cast<double>(z[j] - zmax));
    const int y = labels[static_cast<std::size_t>(i)];
    r.lossSum += std::log(sum) - static_cast<double>(z[y] - zmax);
    if (best == y) ++r.correct;
    if (!dLogits.empty()) {
      float* g = dLogits.data() + i * classes;
      for (std::int64_t j = 0; j < classes; ++j) {
        const double p = std::exp(static_cast<double>(z[j] - zmax)) / sum;
        g[j] = static_cast<float>(p - (j == y ? 1.0 : 0.0)) * gradScale;
      }
    }
  }
  return r;
}

}  // namespace cclab::trainer
