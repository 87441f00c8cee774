// What a run measures: one StepRecord per worker per step, one EpochRecord per epoch.
// Times are nanoseconds on the run's clock (run/clock.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/metrics/staleness.h"
#include "trainer/metrics/trace.h"

namespace cclab::trainer {

struct StepRecord {
  int epoch = 0;
  std::int64_t step = 0;  // within the epoch
  int rank = 0;
  std::int64_t startNs = 0;
  std::int64_t endNs = 0;
  std::int64_t computeNs = 0;      // forward, backward, optimiser, straggler delay
  std::int64_t exposedCommNs = 0;  // communication the worker waited for that no peer caused
  std::int64_t waitNs = 0;         // waiting for peers (sync: the slowest rank's backward; async: lock, SSP bound)
  std::int64_t commBusyNs = 0;     // sync: the comm thread's allreduce time; async: pull + push
  std::int64_t overlappedNs = 0;   // sync: comm time that ran during this worker's backward
  std::int64_t readyNs = 0;        // sync: backward done (all buckets submitted)
  std::int64_t doneNs = 0;         // sync: all buckets reduced
  double lossSum = 0.0;
  std::int64_t samples = 0;
  std::int64_t staleness = -1;  // async: updates applied between pull and push; -1 in sync

  [[nodiscard]] std::int64_t stepNs() const { return endNs - startNs; }
};

struct EpochRecord {
  int epoch = 0;
  double trainLoss = 0.0;     // mean over the epoch's samples
  double testLoss = 0.0;
  double testAccuracy = 0.0;  // fraction
  double trainTimeS = 0.0;    // training time so far (evaluation excluded)
  double samplesPerS = 0.0;   // this epoch
};

struct RunResult {
  std::vector<StepRecord> steps;
  std::vector<EpochRecord> epochs;
  StalenessHistogram staleness;
  std::vector<TraceEvent> trace;
  double trainTimeS = 0.0;
  std::int64_t samples = 0;
  std::vector<float> finalParams;   // sync: rank 0's replica; async: the server's copy
  double replicaDivergence = 0.0;   // sync: max |w_r - w_0| over ranks (0 when replicas agree)
  std::string communicator;  // the Communicator's description (sync) or "parameter server (shared memory)"
};

}  // namespace cclab::trainer
