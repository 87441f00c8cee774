#include "trainer/metrics/gradient_stats.h"

#include <cmath>
#include <map>
#include <utility>

namespace cclab::trainer {
namespace {

using StepKey = std::pair<int, std::int64_t>;  // (epoch, step)

struct StepSums {
  double ownSq = 0.0;  // sum over ranks of |g_r|^2
  double sumSq = -1.0;  // |sum_r g_r|^2 (every rank holds the same)
  int ranks = 0;
};

}  // namespace

void fillGradientStats(std::vector<StepRecord>& steps, int workers) {
  std::map<StepKey, StepSums> sums;
  for (const StepRecord& r : steps) {
    if (r.gradSqNorm < 0.0 || r.sumGradSqNorm < 0.0) continue;
    StepSums& s = sums[{r.epoch, r.step}];
    s.ownSq += r.gradSqNorm;
    s.sumSq = r.sumGradSqNorm;
    ++s.ranks;
  }
  const double n = workers;
  for (StepRecord& r : steps) {
    const auto it = sums.find({r.epoch, r.step});
    if (it == sums.end() || it->second.ranks != workers) continue;
    const double meanSq = it->second.sumSq / (n * n);
    r.meanGradNorm = std::sqrt(meanSq);
    r.gradVariance = it->second.ownSq / n - meanSq;
  }
}

GradientSummary summarizeGradients(const std::vector<StepRecord>& steps, int workers) {
  GradientSummary g;
  g.rankNormMean.assign(static_cast<std::size_t>(workers), 0.0);
  std::vector<std::int64_t> rankSteps(static_cast<std::size_t>(workers), 0);
  double workerNorms = 0.0;
  std::int64_t workerSteps = 0;
  for (const StepRecord& r : steps) {
    if (r.gradVariance < -0.5 || r.rank < 0 || r.rank >= workers) continue;  // -1: no statistics
    const double norm = std::sqrt(r.gradSqNorm);
    g.rankNormMean[static_cast<std::size_t>(r.rank)] += norm;
    ++rankSteps[static_cast<std::size_t>(r.rank)];
    workerNorms += norm;
    ++workerSteps;
    if (r.rank != 0) continue;  // the step's figures once
    ++g.steps;
    g.varianceMean += r.gradVariance;
    g.meanNormMean += r.meanGradNorm;
    const double sq = r.meanGradNorm * r.meanGradNorm;
    g.noiseRatioMean += sq > 0.0 ? r.gradVariance / sq : 0.0;
  }
  if (g.steps == 0) {
    g.rankNormMean.clear();
    return g;
  }
  const auto steps_ = static_cast<double>(g.steps);
  g.varianceMean /= steps_;
  g.meanNormMean /= steps_;
  g.noiseRatioMean /= steps_;
  g.workerNormMean = workerNorms / static_cast<double>(workerSteps);
  for (std::size_t k = 0; k < rankSteps.size(); ++k)
    if (rankSteps[k] > 0) g.rankNormMean[k] /= static_cast<double>(rankSteps[k]);
  return g;
}

}  // namespace cclab::trainer
