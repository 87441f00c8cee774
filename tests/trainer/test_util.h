// Small fixtures shared by the trainer tests: a tiny synthetic task and a tiny config.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>

#include "trainer/data/synthetic.h"
#include "trainer/run/train_config.h"

namespace cclab::trainer::testing {

inline constexpr std::int64_t kFeatures = 20;
inline constexpr int kClasses = 4;

inline DataSplit tinyData(std::int64_t train = 512, std::int64_t test = 128) {
  SyntheticConfig c;
  c.trainSamples = train;
  c.testSamples = test;
  c.features = kFeatures;
  c.classes = kClasses;
  c.seed = 7;
  return makeSynthetic(c);
}

inline TrainConfig tinyConfig(Mode mode, int workers, std::int64_t batch) {
  TrainConfig c;
  c.mode = mode;
  c.workers = workers;
  c.batch = batch;
  c.epochs = 2;
  c.widths = {kFeatures, 16, 8, kClasses};
  c.sgd = {0.05F, 0.9F, 1e-4F};
  c.seed = 3;
  return c;
}

inline double maxAbsDiff(std::span<const float> a, std::span<const float> b) {
  double m = a.size() == b.size() ? 0.0 : INFINITY;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, static_cast<double>(std::abs(a[i] - b[i])));
  return m;
}

}  // namespace cclab::trainer::testing
