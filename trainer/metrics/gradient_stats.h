// Gradient statistics of synchronous data parallelism, per step. Worker r's gradient g_r (of the mean
// loss over its batch, the implemented MLP's parameters only: a preset's synthetic tensors carry
// marker values, not gradients) and the step's mean gradient gbar = (1/N) sum_r g_r:
//   worker norm    |g_r|
//   mean norm      |gbar|
//   variance       (1/N) sum_r |g_r - gbar|^2  = the trace of the gradients' covariance across
//                  workers  = (1/N) sum_r |g_r|^2 - |gbar|^2
// Each worker adds up |g_r|^2 bucket by bucket just before the bucket's allreduce (the gradient is
// still its own then) and |sum_r g_r|^2 after it; the squared norms travel with the step records,
// which every rank gathers at the end (under mpirun too), and the variance is the identity above in
// double precision: one reduction of N squared norms per step, no extra allreduce during the step.
#pragma once

#include <cstdint>
#include <vector>

#include "trainer/metrics/records.h"

namespace cclab::trainer {

// Fills meanGradNorm and gradVariance of every record whose step has gradSqNorm on all `workers`
// ranks (sync); leaves the others at -1.
void fillGradientStats(std::vector<StepRecord>& steps, int workers);

struct GradientSummary {
  std::int64_t steps = 0;            // steps with statistics (0: none, e.g. async)
  double varianceMean = 0.0;         // mean over steps of the variance
  double meanNormMean = 0.0;         // mean over steps of |gbar|
  double workerNormMean = 0.0;       // mean over steps and workers of |g_r|
  double noiseRatioMean = 0.0;       // mean over steps of variance / |gbar|^2
  std::vector<double> rankNormMean;  // per rank: mean over steps of |g_r|
};

GradientSummary summarizeGradients(const std::vector<StepRecord>& steps, int workers);

}  // namespace cclab::trainer
