#include "trainer/model/evaluate.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "trainer/data/batch.h"
#include "trainer/model/loss.h"

namespace cclab::trainer {

EvalResult evaluate(const Mlp& model, std::span<const float> params, const Dataset& data, std::int64_t batch) {
  if (data.size() == 0) return {};
  batch = std::min(batch, data.size());
  MlpWorkspace ws(model.layout(), batch);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(batch));
  std::vector<int> labels(static_cast<std::size_t>(batch));
  double lossSum = 0.0;
  std::int64_t correct = 0;
  for (std::int64_t start = 0; start < data.size(); start += batch) {
    const std::int64_t n = std::min(batch, data.size() - start);
    std::iota(idx.begin(), idx.begin() + n, start);
    const std::span<const std::int64_t> rows(idx.data(), static_cast<std::size_t>(n));
    gatherBatch(data, rows, ws.input(), labels);
    const auto logits = model.forward(params, n, ws);
    const auto r = softmaxCrossEntropy(logits, std::span<const int>(labels.data(), static_cast<std::size_t>(n)),
                                       model.layout().classes(), 0.0F, {});
    lossSum += r.lossSum;
    correct += r.correct;
  }
  const auto total = static_cast<double>(data.size());
  return {lossSum / total, static_cast<double>(correct) / total};
}

}  // namespace cclab::trainer
