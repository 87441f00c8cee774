#include "trainer/run/gradient_step.h"

#include <algorithm>
#include <string>

#include "collectives/core/errors.h"
#include "trainer/data/batch.h"
#include "trainer/model/loss.h"

namespace cclab::trainer {
namespace {

std::int64_t checkedMicroBatch(std::int64_t workerBatch, int microBatches) {
  if (microBatches < 1) throw InvalidArgument("micro-batches must be >= 1");
  if (workerBatch < 1 || workerBatch % microBatches != 0)
    throw InvalidArgument("worker batch " + std::to_string(workerBatch) + " is not a positive multiple of " +
                          std::to_string(microBatches) + " micro-batches");
  return workerBatch / microBatches;
}

}  // namespace

GradientStep::GradientStep(const Mlp& model, const Dataset& data, std::int64_t workerBatch, int microBatches)
    : model_(model), data_(data), workerBatch_(workerBatch), microBatches_(microBatches),
      microBatch_(checkedMicroBatch(workerBatch, microBatches)), ws_(model.layout(), microBatch_),
      labels_(static_cast<std::size_t>(microBatch_)) {}

StepLoss GradientStep::compute(std::span<const float> params, std::span<const std::int64_t> indices,
                               std::span<float> grads, const RunClock& clock, ComputeThrottle& throttle,
                               const LayerDoneFn& onLayerDone) {
  if (static_cast<std::int64_t>(indices.size()) != workerBatch_)
    throw InvalidArgument("GradientStep: " + std::to_string(indices.size()) + " indices for a batch of " +
                          std::to_string(workerBatch_));
  std::fill(grads.begin(), grads.end(), 0.0F);
  const float scale = 1.0F / static_cast<float>(workerBatch_);
  StepLoss out;
  for (int m = 0; m < microBatches_; ++m) {
    std::int64_t t = clock.nowNs();
    gatherBatch(data_, indices.subspan(static_cast<std::size_t>(m * microBatch_), static_cast<std::size_t>(microBatch_)),
                ws_.input(), labels_);
    const auto logits = model_.forward(params, microBatch_, ws_);
    out.lossSum += softmaxCrossEntropy(logits, labels_, model_.layout().classes(), scale, model_.logitGradient(ws_)).lossSum;
    throttle.pace(clock, t);
    t = clock.nowNs();
    const bool last = m + 1 == microBatches_;
    model_.backward(params, microBatch_, ws_, grads, [&](int layer) {
      throttle.pace(clock, t);
      if (last && onLayerDone) onLayerDone(layer);
      t = clock.nowNs();
    });
  }
  out.samples = workerBatch_;
  return out;
}

}  // namespace cclab::trainer
