// Asynchronous data parallelism: N workers, each looping claim a batch -> pull -> gradient -> push,
// against one ParameterServer, never waiting for each other (except at the SSP bound and at the
// end-of-epoch evaluation barrier). Batches come from a shared queue over the epoch's sampler list
// (async/batch_queue.h), so a straggler claims fewer of them instead of holding the epoch back. Each push is one SGD update with the worker's batch
// (batch / workers samples) scaled by 1/workers, so an epoch makes `workers` times as many updates
// as sync does, each a `workers`-th of the size: with no staleness the two would move alike.
// Communication is a shared-memory copy here, not a Communicator collective.
#pragma once

#include "trainer/data/dataset.h"
#include "trainer/metrics/records.h"
#include "trainer/run/observer.h"
#include "trainer/run/train_config.h"

namespace cclab::trainer {

RunResult runAsync(const TrainConfig& config, const DataSplit& data, const EpochObserver& observe = {});

}  // namespace cclab::trainer
