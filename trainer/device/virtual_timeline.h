// The emulated device's clock. With --compute-model the workers still compute on the CPU (so the
// numbers they train on are real), and their allreduces still run for real; afterwards the run's
// timeline is rebuilt with every compute interval replaced by its modelled length (FLOPs / rate,
// device/compute_model.h) and every allreduce keeping its real communication time.
//
// Why an accounted (virtual) timeline and not sleeping: the modelled device is ~10^4 times faster
// than this CPU, so the real compute is always longer than the modelled one and no sleep can shorten
// it; and on a shared 2-core machine the CPU's time-slicing would leak into every figure. The
// rebuild per step and rank r (factor F_r = the straggler's compute factor, else 1):
//   forward, then backward unit by unit (model/gradient_units.h), each F_r x FLOPs / rate; a bucket
//   is ready when its lowest unit is done (or at the end of the backward with --no-overlap);
//   bucket b's call on rank r starts at max(ready, r's previous bucket's end) (one communication
//   thread per rank, buckets in order); the collective starts when the last rank has called and
//   ends on rank r after r's real communication time for it (its end minus the last rank's real
//   arrival, i.e. the allreduce's real duration with waiting for peers taken out);
//   the optimiser starts when all buckets are done and lasts F_r x its FLOPs / rate;
//   every epoch starts when the last rank has finished the previous one (the evaluation barrier).
// Steps and arrivals are replaced by the rebuilt ones, so the usual attribution
// (sync/wait_attribution.h) splits them into compute, wait and exposed communication.
#pragma once

#include <vector>

#include "trainer/device/compute_model.h"
#include "trainer/metrics/records.h"
#include "trainer/model/gradient_units.h"
#include "trainer/sync/buckets.h"

namespace cclab::trainer {

// Modelled times of one rank's step without a straggler, ns.
struct DeviceCosts {
  double forwardNs = 0.0;           // one micro-batch
  std::vector<double> backwardNs;   // one micro-batch, per unit
  int microBatches = 1;
  double updateNs = 0.0;

  [[nodiscard]] double stepComputeNs() const;  // all micro-batches' forward + backward, and the update
};

DeviceCosts deviceCosts(const GradientUnits& units, const ComputeModel& model, std::int64_t microBatch, int microBatches);

struct VirtualRun {
  int workers = 1;
  bool overlap = true;
  std::vector<double> factor;  // per rank: the straggler's compute factor, else 1
};

// Replaces run.steps, run.arrivals, run.epochs' times and run.trainTimeS by the emulated device's.
void applyVirtualClock(RunResult& run, const DeviceCosts& costs, const std::vector<Bucket>& buckets, const VirtualRun& v);

}  // namespace cclab::trainer
