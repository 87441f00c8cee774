// One entry point for a training run: sync (through a Communicator of the configured backend) or
// async (parameter server).
#pragma once

#include "trainer/data/dataset.h"
#include "trainer/metrics/records.h"
#include "trainer/run/observer.h"
#include "trainer/run/train_config.h"

namespace cclab::trainer {

// Throws InvalidArgument for a bad config and Error when the backend is unavailable.
RunResult train(const TrainConfig& config, const DataSplit& data, const EpochObserver& observe = {});

}  // namespace cclab::trainer
