#include "trainer/metrics/summary.h"

#include <algorithm>
#include <vector>

#include "trainer/run/clock.h"

namespace cclab::trainer {
namespace {

double percentileUs(std::vector<std::int64_t> ns, double q) {
  if (ns.empty()) return 0.0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(ns.size() - 1));
  std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(k), ns.end());
  return static_cast<double>(ns[k]) / kNsPerUs;
}

std::optional<double> efficiency(double rate, const std::optional<double>& base, int workers, int baseWorkers) {
  if (!base || *base <= 0 || baseWorkers <= 0) return std::nullopt;
  return rate / (*base * workers / baseWorkers);
}

std::optional<double> slowdown(double rate, const std::optional<double>& base) {
  if (!base || rate <= 0) return std::nullopt;
  return *base / rate;
}

}  // namespace

Summary summarize(const RunResult& run, int workers, const Baselines& baselines) {
  constexpr double kP50 = 0.5;
  constexpr double kP99 = 0.99;
  Summary s;
  s.trainTimeS = run.trainTimeS;
  s.samplesPerS = run.trainTimeS > 0 ? static_cast<double>(run.samples) / run.trainTimeS : 0.0;
  s.workerSteps = static_cast<std::int64_t>(run.steps.size());
  std::int64_t step = 0, compute = 0, exposed = 0, wait = 0, busy = 0, overlapped = 0;
  std::vector<std::int64_t> stepNs;
  stepNs.reserve(run.steps.size());
  for (const StepRecord& r : run.steps) {
    step += r.stepNs();
    compute += r.computeNs;
    exposed += r.exposedCommNs;
    wait += r.waitNs;
    busy += r.commBusyNs;
    overlapped += r.overlappedNs;
    stepNs.push_back(r.stepNs());
  }
  if (!run.steps.empty()) {
    const auto n = static_cast<double>(run.steps.size()) * kNsPerUs;
    s.stepUsMean = static_cast<double>(step) / n;
    s.computeUs = static_cast<double>(compute) / n;
    s.exposedCommUs = static_cast<double>(exposed) / n;
    s.waitUs = static_cast<double>(wait) / n;
    s.commBusyUs = static_cast<double>(busy) / n;
  }
  if (step > 0) {
    s.commFraction = static_cast<double>(exposed) / static_cast<double>(step);
    s.waitFraction = static_cast<double>(wait) / static_cast<double>(step);
  }
  if (busy > 0) s.overlapRatio = static_cast<double>(overlapped) / static_cast<double>(busy);
  s.stepUsP50 = percentileUs(stepNs, kP50);
  s.stepUsP99 = percentileUs(stepNs, kP99);
  if (!run.epochs.empty()) {
    s.finalTrainLoss = run.epochs.back().trainLoss;
    s.finalTestLoss = run.epochs.back().testLoss;
    s.finalTestAccuracy = run.epochs.back().testAccuracy;
    for (const EpochRecord& e : run.epochs) s.bestTestAccuracy = std::max(s.bestTestAccuracy, e.testAccuracy);
  }
  s.stalenessMean = run.staleness.mean();
  s.stalenessMax = run.staleness.max();
  s.stalenessP50 = run.staleness.percentile(kP50);
  s.stalenessP99 = run.staleness.percentile(kP99);
  s.scalingEfficiency = efficiency(s.samplesPerS, baselines.scalingSamplesPerS, workers, baselines.scalingWorkers);
  s.stragglerSlowdown = slowdown(s.samplesPerS, baselines.stragglerFreeSamplesPerS);
  s.ranks = analyzeRanks(run, workers);

  return s;
}

}  // namespace cclab::trainer
