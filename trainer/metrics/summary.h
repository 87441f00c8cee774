// The run's summary figures (the JSON "summary" object and the stdout table), from its records.
// Definitions (docs/trainer.md):
//   samples/s          = samples trained / training time (evaluation excluded)
//   step split         = per worker-step means of compute, exposed communication and wait
//   comm fraction      = sum(exposed comm) / sum(step time)
//   overlap ratio      = sum(real comm that ran during forward+backward) / sum(real comm)   (sync; real
//                        comm = allreduce time after the last rank arrived, so waiting is never overlap)
//   scaling efficiency = samples/s / (workers / baseline workers x baseline samples/s)
//   straggler slowdown = samples/s without the straggler / samples/s with it
#pragma once

#include <cstdint>
#include <optional>

#include "trainer/metrics/rank_report.h"
#include "trainer/metrics/records.h"

namespace cclab::trainer {

// Throughput of earlier runs to compare with (read from their -J files by the CLI).
struct Baselines {
  std::optional<double> scalingSamplesPerS;  // a run with fewer workers (usually 1)
  int scalingWorkers = 1;
  std::optional<double> stragglerFreeSamplesPerS;  // the same run without --straggler
};

struct Summary {
  double samplesPerS = 0.0;
  double trainTimeS = 0.0;
  std::int64_t workerSteps = 0;  // step records over all workers
  double stepUsMean = 0.0;
  double stepUsP50 = 0.0;
  double stepUsP99 = 0.0;
  double computeUs = 0.0;
  double exposedCommUs = 0.0;
  double waitUs = 0.0;
  double commBusyUs = 0.0;
  double commFraction = 0.0;
  double waitFraction = 0.0;
  double overlapRatio = 0.0;
  double finalTrainLoss = 0.0;
  double finalTestLoss = 0.0;
  double finalTestAccuracy = 0.0;
  double bestTestAccuracy = 0.0;
  double stalenessMean = 0.0;
  std::int64_t stalenessMax = 0;
  std::int64_t stalenessP50 = 0;
  std::int64_t stalenessP99 = 0;
  std::optional<double> scalingEfficiency;
  std::optional<double> stragglerSlowdown;
  RankReport ranks;  // per-rank figures and the named stragglers
};

Summary summarize(const RunResult& run, int workers, const Baselines& baselines = {});

}  // namespace cclab::trainer
