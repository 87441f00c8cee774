#include "trainer/run/train_config.h"

#include <string>

#include "collectives/core/errors.h"

namespace cclab::trainer {

Mode parseMode(std::string_view s) {
  if (s == "sync") return Mode::Sync;
  if (s == "async") return Mode::Async;
  throw InvalidArgument("unknown mode '" + std::string(s) + "' (sync, async)");
}

std::string_view name(Mode m) { return m == Mode::Sync ? "sync" : "async"; }

void validate(const TrainConfig& c) {
  constexpr int kMaxWorkers = 1024;
  if (c.workers < 1 || c.workers > kMaxWorkers) throw InvalidArgument("--workers must be in [1, 1024]");
  if (c.epochs < 1) throw InvalidArgument("--epochs must be >= 1");
  if (c.microBatches < 1) throw InvalidArgument("--micro-batches must be >= 1");
  if (c.batch < 1 || c.batch % (static_cast<std::int64_t>(c.workers) * c.microBatches) != 0)
    throw InvalidArgument("--batch " + std::to_string(c.batch) + " must be a positive multiple of workers x micro-batches (" +
                          std::to_string(c.workers) + " x " + std::to_string(c.microBatches) + ")");
  if (c.maxStepsPerEpoch < 0) throw InvalidArgument("--steps-per-epoch must be >= 0");
  if (c.straggler.rank >= c.workers)
    throw InvalidArgument("--straggler rank " + std::to_string(c.straggler.rank) + " is not a worker (0.." +
                          std::to_string(c.workers - 1) + ")");
  if (c.straggler.rank >= 0 && !(c.straggler.factor >= 1.0)) throw InvalidArgument("--straggler factor must be >= 1");
  if (c.sync.bucketBytes < sizeof(float) || c.sync.firstBucketBytes < sizeof(float))
    throw InvalidArgument("bucket sizes must be at least one float");
  if (!(c.async.dcLambda >= 0.0F)) throw InvalidArgument("--dc-lambda must be >= 0");
  if (c.async.sspBound < -1) throw InvalidArgument("--ssp must be >= 0");
}

}  // namespace cclab::trainer
