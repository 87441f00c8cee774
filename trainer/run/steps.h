// Helpers both parallel modes share: the steps in an epoch and the end-of-epoch record.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "collectives/core/errors.h"
#include "trainer/data/dataset.h"
#include "trainer/metrics/records.h"
#include "trainer/model/evaluate.h"
#include "trainer/run/clock.h"
#include "trainer/run/train_config.h"

namespace cclab::trainer {

// Full worker batches in a shard (the incomplete last batch is dropped, so every worker runs the
// same number of steps), capped by --steps-per-epoch.
inline std::int64_t stepsPerEpoch(const TrainConfig& c, std::int64_t shardSize) {
  std::int64_t steps = shardSize / c.workerBatch();
  if (c.maxStepsPerEpoch > 0 && c.maxStepsPerEpoch < steps) steps = c.maxStepsPerEpoch;
  if (steps < 1)
    throw InvalidArgument("each worker's shard (" + std::to_string(shardSize) + " samples) is smaller than its batch (" +
                          std::to_string(c.workerBatch()) + ")");
  return steps;
}

inline void checkModelFitsData(const ParameterLayout& layout, const DataSplit& data) {
  if (layout.inputs() != data.train.features || layout.classes() != data.train.classes)
    throw InvalidArgument("--widths " + formatWidths(layout.widths()) + " do not fit " + data.name + " (" +
                          std::to_string(data.train.features) + " inputs, " + std::to_string(data.train.classes) +
                          " classes)");
}

inline EpochRecord makeEpochRecord(int epoch, double lossSum, std::int64_t samples, const EvalResult& test,
                                   std::int64_t epochTrainNs, double trainTimeS) {
  EpochRecord r;
  r.epoch = epoch;
  r.trainLoss = samples ? lossSum / static_cast<double>(samples) : 0.0;
  r.testLoss = test.loss;
  r.testAccuracy = test.accuracy;
  r.trainTimeS = trainTimeS;
  r.samplesPerS = epochTrainNs > 0 ? static_cast<double>(samples) * kNsPerS / static_cast<double>(epochTrainNs) : 0.0;
  return r;
}

}  // namespace cclab::trainer
