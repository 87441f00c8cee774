#include "trainer/run/train_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "collectives/conventions/limits.h"
#include "collectives/conventions/memory_budget.h"
#include "collectives/core/errors.h"
#include "collectives/plan/algorithm_file.h"
#include "fmt/format.h"
#include "trainer/model/layout.h"
#include "trainer/model/synthetic.h"

namespace cclab::trainer {

Mode parseMode(std::string_view s) {
  if (s == "sync") return Mode::Sync;
  if (s == "async") return Mode::Async;
  throw InvalidArgument("unknown mode '" + std::string(s) + "' (sync, async)");
}

std::string_view name(Mode m) { return m == Mode::Sync ? "sync" : "async"; }

namespace {

// Finite and in range: inf or nan would train to NaN, a negative rate would ascend.
void checkHyperParameters(const TrainConfig& c) {
  const auto finite = [](float v) { return std::isfinite(v); };
  if (!finite(c.sgd.lr) || !(c.sgd.lr > 0.0F))
    throw InvalidArgument("--lr must be a finite number > 0, got " + fmt::format("{:g}", c.sgd.lr));
  if (!finite(c.sgd.momentum) || !(c.sgd.momentum >= 0.0F && c.sgd.momentum < 1.0F))
    throw InvalidArgument("--momentum must be in [0, 1), got " + fmt::format("{:g}", c.sgd.momentum));
  if (!finite(c.sgd.weightDecay) || !(c.sgd.weightDecay >= 0.0F))
    throw InvalidArgument("--weight-decay must be a finite number >= 0, got " + fmt::format("{:g}", c.sgd.weightDecay));
  if (!finite(c.async.dcLambda) || !(c.async.dcLambda >= 0.0F))
    throw InvalidArgument("--dc-lambda must be a finite number >= 0, got " + fmt::format("{:g}", c.async.dcLambda));
}

// Parameters of one replica bounded before anything is allocated (a width of a million is a 3 GB
// matrix per worker, times its gradients and momentum).
void checkModelSize(const TrainConfig& c) {
  if (c.model != "mlp") return;  // the presets are fixed sizes
  conventions::requireAtMost(replicaParameters(c), conventions::kMaxModelParameters,
                             "--layers " + formatWidths(c.widths) + ": the parameters of one replica",
                             "1 GiB of float32 per replica, every worker holding its replica, gradients and momentum");
}

}  // namespace

std::int64_t replicaParameters(const TrainConfig& c) {
  if (c.model != "mlp") return modelPreset(c.model).parameterCount();
  std::int64_t total = 0;
  for (std::size_t l = 0; l + 1 < c.widths.size(); ++l)
    total = conventions::saturatingBytes(std::min<std::int64_t>(c.widths[l], INT64_MAX - 1) + 1, c.widths[l + 1], total);  // W (out x in) and b (out)
  return total;
}

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
  if (c.straggler.rank >= 0 && !(c.straggler.computeFactor >= 1.0 && c.straggler.computeFactor <= kMaxStragglerFactor))
    throw InvalidArgument("--straggler compute factor must be in [1, " + fmt::format("{:g}", kMaxStragglerFactor) + "]");
  if (c.straggler.startDelay.count() != 0 || c.straggler.linkFactor != 1.0)
    throw InvalidArgument("--straggler " + format(c.straggler) + ": the trainer injects only compute= (a slower worker)");
  if (c.shard.mode == ShardMode::HardTo && c.shard.rank >= c.workers)
    throw InvalidArgument("--shard " + format(c.shard) + ": rank " + std::to_string(c.shard.rank) + " is not a worker (0.." +
                          std::to_string(c.workers - 1) + ")");
  if (c.mode == Mode::Async && c.shard.perWorker())
    throw InvalidArgument("--shard " + format(c.shard) + " applies to --mode sync only (async workers claim batches from one "
                          "shared queue, so no worker has a shard of its own)");
  checkHyperParameters(c);
  checkModelSize(c);
  if (c.sync.bucketBytes < sizeof(float) || c.sync.firstBucketBytes < sizeof(float))
    throw InvalidArgument("bucket sizes must be at least one float");
  if (c.async.dcAdaptive && !(c.async.dcLambda > 0.0F))
    throw InvalidArgument("--dc-adaptive needs --dc-lambda > 0 (it scales that lambda)");
  constexpr int kMaxForcedStaleness = 1000;
  if (c.async.forcedStaleness < 0 || c.async.forcedStaleness > kMaxForcedStaleness)
    throw InvalidArgument("--forced-staleness must be in [0, 1000]");
  if (c.async.sspBound < -1) throw InvalidArgument("--ssp must be >= 0");
  if (c.mode == Mode::Async && c.compute.active() && c.async.sspBound >= 0)
    throw InvalidArgument("--ssp cannot be combined with --compute-model (the emulated clock orders the pushes; SSP "
                          "would wait on real progress)");
  if (c.mode == Mode::Async && c.model != "mlp")
    throw InvalidArgument("--model " + c.model + " applies to --mode sync only (the parameter server has no synthetic tensors)");
  (void)modelPreset(c.model);  // throws for an unknown preset
  // An algorithm file runs on the rank count it was written for. Checked here, before anything runs:
  // under mpirun the workers are the processes, so this is a usage error of the start-of-job
  // agreement (one line from rank 0), not one line per rank after the header.
  if (c.mode == Mode::Sync && plan::isFileAlgorithm(c.sync.algorithm) &&
      plan::algorithmFileOf(c.sync.algorithm).unit.nranks != c.workers)
    throw InvalidArgument("--algo " + std::string(plan::name(c.sync.algorithm)) + " is written for " +
                          std::to_string(plan::algorithmFileOf(c.sync.algorithm).unit.nranks) + " ranks, not the " +
                          std::to_string(c.workers) + " workers");
}

}  // namespace cclab::trainer
