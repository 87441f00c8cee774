#include "trainer/model/gradient_check.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "collectives/core/errors.h"
#include "trainer/data/batch.h"
#include "trainer/model/loss.h"

namespace cclab::trainer {

GradientCheckResult checkGradients(const Mlp& model, std::span<const float> params, const Dataset& data,
                                   const GradientCheckConfig& config) {
  const ParameterLayout& layout = model.layout();
  const std::int64_t batch = std::min(config.batch, data.size());
  if (batch < 1) throw InvalidArgument("gradient check: empty dataset");
  MlpWorkspace ws(layout, batch);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(batch));
  std::iota(idx.begin(), idx.end(), std::int64_t{0});
  std::vector<int> labels(static_cast<std::size_t>(batch));
  gatherBatch(data, idx, ws.input(), labels);
  const float scale = 1.0F / static_cast<float>(batch);

  std::vector<float> w(params.begin(), params.end());
  auto meanLoss = [&] {
    const auto logits = model.forward(w, batch, ws);
    return softmaxCrossEntropy(logits, labels, layout.classes(), 0.0F, {}).lossSum / static_cast<double>(batch);
  };

  std::vector<float> grads(w.size(), 0.0F);
  const auto logits = model.forward(w, batch, ws);
  softmaxCrossEntropy(logits, labels, layout.classes(), scale, model.logitGradient(ws));
  model.backward(w, batch, ws, grads);

  GradientCheckResult r;
  for (int l = 0; l < layout.layerCount(); ++l) {
    const LayerSlice& s = layout.layer(l);
    const std::int64_t n = std::min(config.parametersPerLayer, s.count());
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t i = s.begin() + k * s.count() / n;
      const float saved = w[static_cast<std::size_t>(i)];
      w[static_cast<std::size_t>(i)] = saved + static_cast<float>(config.epsilon);
      const double plus = meanLoss();
      w[static_cast<std::size_t>(i)] = saved - static_cast<float>(config.epsilon);
      const double minus = meanLoss();
      w[static_cast<std::size_t>(i)] = saved;
      const double numeric = (plus - minus) / (2.0 * config.epsilon);
      const double analytic = grads[static_cast<std::size_t>(i)];
      const double err = std::abs(analytic - numeric) / std::max(std::abs(analytic) + std::abs(numeric), kGradientFloor);
      ++r.checked;
      if (err > r.maxError) {
        r.maxError = err;
        r.worstParameter = i;
      }
    }
  }
  return r;
}

}  // namespace cclab::trainer
