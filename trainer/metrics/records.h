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
  std::int64_t waitNs = 0;         // waiting for peers (sync: blocked while a bucket's allreduce waited for the
                                   // last rank to arrive; async: lock, SSP bound)
  std::int64_t commBusyNs = 0;     // sync: allreduce time after every rank arrived (real communication);
                                   // async: pull + push
  std::int64_t overlappedNs = 0;   // sync: real communication that ran during this worker's forward+backward
  std::int64_t peerWaitNs = 0;     // sync: time this rank's allreduces waited for later ranks (hidden or not)
  std::int64_t throttledNs = 0;    // straggler: compute the throttle measured (run/straggler.h); 0 otherwise
  std::int64_t injectedNs = 0;     // straggler: delay the throttle injected (part of computeNs)
  std::int64_t deviceComputeNs = 0;  // the worker thread's CPU time in the step (the throttle's spin
                                     // excluded) + injectedNs: compute as a dedicated device would
                                     // take it, without this machine's time-slicing
  std::int64_t readyNs = 0;        // sync: backward done (all buckets submitted)
  std::int64_t doneNs = 0;         // sync: all buckets reduced
  double lossSum = 0.0;
  std::int64_t samples = 0;
  std::int64_t staleness = -1;  // async: updates applied between pull and push; -1 in sync
  // Sync gradient statistics (metrics/gradient_stats.h); -1 where there are none (async).
  double gradSqNorm = -1.0;     // |g_r|^2: this worker's gradient before the allreduce
  double sumGradSqNorm = -1.0;  // |sum_r g_r|^2: after the allreduce
  double meanGradNorm = -1.0;   // |gbar| of the step (the same on every rank)
  double gradVariance = -1.0;   // (1/N) sum_r |g_r - gbar|^2 of the step

  [[nodiscard]] std::int64_t stepNs() const { return endNs - startNs; }
};

// Sync: one rank's arrival at one bucket's allreduce (its communication thread calling it) and the
// allreduce's end on that rank. The last rank to arrive makes the others wait.
struct BucketArrival {
  int epoch = 0;
  std::int64_t step = 0;  // within the epoch
  int bucket = 0;         // index within the step, in submission order
  int rank = 0;
  std::int64_t arriveNs = 0;
  std::int64_t endNs = 0;
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
  std::vector<BucketArrival> arrivals;  // sync with >= 2 workers; empty otherwise
  double trainTimeS = 0.0;         // with a compute model: on the emulated device's clock (device/virtual_timeline.h)
  double wallTrainTimeS = 0.0;     // the real (CPU) training time
  std::int64_t samples = 0;
  std::int64_t allreducedBytes = 0;  // sync: gradient bytes all ranks handed to allreduces (0 with one worker)
  std::vector<float> finalParams;   // sync: rank 0's replica; async: the server's copy
  std::int64_t sspMaxGap = -1;      // async with --ssp: the largest lead over the slowest worker seen; -1 otherwise
  double replicaDivergence = 0.0;   // sync: max |w_r - w_0| over ranks (0 when replicas agree)
  std::string communicator;  // the Communicator's description (sync) or "parameter server (shared memory)"
  std::vector<std::string> rankLocations;  // sync under mpirun: where each rank ran ("pid 42 on host node 0"); else empty
};

}  // namespace cclab::trainer
