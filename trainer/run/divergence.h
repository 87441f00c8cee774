// A run whose loss or parameters stop being finite has diverged (too large a learning rate, most
// often): it stops at once with one clear line (cclab::Error, exit 1) instead of training on NaN and
// reporting success.
#pragma once

#include <cstdint>
#include <span>

#include "trainer/metrics/records.h"
#include "trainer/run/train_config.h"

namespace cclab::trainer {

// Throws Error when `params` (after the update of epoch `epoch`, step `step`) hold an inf or nan.
// Sync replicas are identical, so every worker stops at the same step.
void checkParamsFinite(std::span<const float> params, const TrainConfig& c, int epoch, std::int64_t step);
// Throws Error when a worker's loss over one step is not finite.
void checkLossFinite(double lossSum, const TrainConfig& c, int epoch, std::int64_t step, int rank);
// Throws Error when sync replicas ended apart: `divergence` is max |w_r - w_0| over every rank's final
// parameters, which is 0 when every rank applied the same averaged gradients to the same start (the
// collectives give every rank the same bits), so anything else is a failed run, not a statistic.
void checkReplicasAgree(double divergence);
// Throws Error when the epoch's train or test loss is not finite.
void checkEpochFinite(const EpochRecord& e, const TrainConfig& c);

}  // namespace cclab::trainer
