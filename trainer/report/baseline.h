// Baselines for --scaling-baseline and --straggler-baseline: an earlier -J file whose throughput this
// run is compared with. A baseline of another configuration gives a meaningless ratio (a mismatched
// one once printed a 9.2x slowdown), so its "config" must match this run's:
//   every field except the hyper-parameters that do not change throughput (epochs, seed, lr,
//   momentum, weight_decay), and except
//   --straggler-baseline: "straggler" (the baseline must have none);
//   --scaling-baseline:   "workers" and "worker_batch" (the baseline must have no more workers).
#pragma once

#include <filesystem>
#include <string>

#include "nlohmann/json.hpp"

namespace cclab::trainer {

enum class BaselineKind { Scaling, Straggler };

struct BaselineRun {
  double samplesPerS = 0.0;
  int workers = 1;
  nlohmann::json config;  // the file's "config" object
};

// Reads summary.samples_per_s and config of an earlier -J file; throws InvalidArgument.
BaselineRun readBaseline(const std::filesystem::path& path);

// Throws InvalidArgument (one line naming the flag, the file and the first differing field) unless
// `baseline` may serve as this kind of baseline for a run whose -J "config" is runConfig.
void checkBaseline(BaselineKind kind, const nlohmann::json& runConfig, const BaselineRun& baseline,
                   const std::filesystem::path& path);

}  // namespace cclab::trainer
