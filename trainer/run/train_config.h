// What a training run does, in small parts: the model and optimiser, the parallelism, and the
// straggler. The CLI (cli/options.h) fills it; tests build it directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/core/straggler.h"
#include "trainer/data/sampler.h"
#include "trainer/data/shards.h"
#include "trainer/device/compute_model.h"
#include "trainer/model/sgd.h"
#include "trainer/run/straggler.h"

namespace cclab::trainer {

enum class Mode : std::uint8_t { Sync, Async };
Mode parseMode(std::string_view s);  // "sync", "async"; throws InvalidArgument
std::string_view name(Mode m);

// DDP's defaults (torch.nn.parallel.DistributedDataParallel): bucket_cap_mb = 25, and a first
// bucket of 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES) so the first allreduce starts early.
inline constexpr std::size_t kDefaultBucketBytes = 25ULL << 20;
inline constexpr std::size_t kDefaultFirstBucketBytes = 1ULL << 20;

struct SyncConfig {
  Backend backend = Backend::Host;
  plan::Algorithm algorithm = plan::Algorithm::Auto;
  std::size_t bucketBytes = kDefaultBucketBytes;
  std::size_t firstBucketBytes = kDefaultFirstBucketBytes;
  bool overlap = true;  // false: every bucket starts after the whole backward
};

struct AsyncConfig {
  float dcLambda = 0.0F;  // DC-ASGD: g + lambda * g * g * (w_now - w_pulled); 0 = plain ASGD
  bool dcAdaptive = false;  // DC-ASGD-a: lambda / sqrt(mean square of g) per element (async/parameter_server.h)
  int sspBound = -1;
  int forcedStaleness = 0;  // every pull returns the parameters K updates old (parameter_server.h); 0 = off      // SSP: a worker may run at most this many pushes ahead of the slowest; -1 = none
};

struct TrainConfig {
  Mode mode = Mode::Sync;
  int workers = 4;
  int epochs = 10;
  std::int64_t batch = 256;      // global: samples per optimiser step over all workers (sync) / per push x workers (async)
  int microBatches = 1;          // gradient accumulation: each worker's batch is split into this many
  std::int64_t maxStepsPerEpoch = 0;  // 0: the whole epoch
  std::vector<std::int64_t> widths{784, 256, 128, 10};  // the implemented MLP (--layers)
  std::string model = "mlp";     // --model: "mlp", or a preset adding synthetic tensors (model/synthetic.h)
  ComputeModel compute;          // --compute-model: the emulated device (none: CPU time)
  SgdConfig sgd;
  std::uint64_t seed = 1;        // model initialisation and sampler shuffle
  Remainder remainder = Remainder::Pad;
  ShardConfig shard;             // --shard: how the epoch is split across workers (data/shards.h)
  SyncConfig sync;
  AsyncConfig async;
  Straggler straggler;           // the trainer injects computeFactor only
  bool trace = false;            // record a Chrome-trace timeline

  [[nodiscard]] std::int64_t workerBatch() const { return batch / workers; }
};

// Parameters of one replica (the MLP's from --layers, saturating; a preset's own).
[[nodiscard]] std::int64_t replicaParameters(const TrainConfig& c);

// Throws InvalidArgument naming the first problem (batch not divisible by workers x micro-batches,
// straggler rank out of range, a straggler delay or link factor (the trainer has neither), a learning
// rate, momentum, weight decay or DC lambda that is not finite or out of range, ...).
void validate(const TrainConfig& c);

}  // namespace cclab::trainer
