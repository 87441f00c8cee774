// One worker's gradient computation for one step: k micro-batches (gradient accumulation), each
// forward, loss and backward, summed into one gradient of the mean loss over the worker's batch.
// During the last micro-batch's backward, onLayerDone(l) fires as each layer's gradient is final
// (this is where synchronous training starts a bucket's allreduce).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trainer/data/dataset.h"
#include "trainer/model/mlp.h"
#include "trainer/run/straggler.h"

namespace cclab::trainer {

struct StepLoss {
  double lossSum = 0.0;  // over the worker's batch
  std::int64_t samples = 0;
};

class GradientStep {
 public:
  // workerBatch must be a positive multiple of microBatches; throws InvalidArgument otherwise.
  GradientStep(const Mlp& model, const Dataset& data, std::int64_t workerBatch, int microBatches);

  // grads is zeroed, then receives d(mean loss)/dw. indices.size() == workerBatch.
  StepLoss compute(std::span<const float> params, std::span<const std::int64_t> indices, std::span<float> grads,
                   const RunClock& clock, ComputeThrottle& throttle, const LayerDoneFn& onLayerDone = {});

  [[nodiscard]] std::int64_t workerBatch() const { return workerBatch_; }

 private:
  const Mlp& model_;
  const Dataset& data_;
  std::int64_t workerBatch_;
  int microBatches_;
  std::int64_t microBatch_;
  MlpWorkspace ws_;
  std::vector<int> labels_;
};

}  // namespace cclab::trainer
