// Synchronous data parallelism, as PyTorch DDP: every worker holds the whole model, computes the
// gradient of its shard's batch, and the gradients are summed through the Communicator and averaged
// before each worker applies the same SGD step. Buckets start their allreduce as soon as their layers'
// backward is done (on the worker's communication thread), so communication overlaps the backward of
// the layers below. With k micro-batches the gradient accumulates locally and only the last
// micro-batch's backward starts the buckets (DDP's no_sync).
#pragma once

#include "collectives/communicator.h"
#include "trainer/data/dataset.h"
#include "trainer/metrics/records.h"
#include "trainer/run/observer.h"
#include "trainer/run/train_config.h"

namespace cclab::trainer {

// comm must have config.workers ranks. Worker r's parameters start as rank 0's, broadcast.
RunResult runSync(const TrainConfig& config, const DataSplit& data, Communicator& comm,
                  const EpochObserver& observe = {});


}  // namespace cclab::trainer
