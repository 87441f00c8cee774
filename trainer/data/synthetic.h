// A synthetic classification task for quick runs: one Gaussian cluster per class.
// Class centres have entries N(0, 1) * kCenterSpread / sqrt(features), so two centres are about
// kCenterSpread * sqrt(2) apart whatever the width; samples add N(0, noise^2) to every feature.
#pragma once

#include <cstdint>

#include "trainer/data/dataset.h"

namespace cclab::trainer {

inline constexpr double kCenterSpread = 4.0;

struct SyntheticConfig {
  std::int64_t trainSamples = 8192;
  std::int64_t testSamples = 2048;
  std::int64_t features = 784;
  int classes = 10;
  double noise = 1.0;
  std::uint64_t seed = 1;
};

// Deterministic in the config. Throws InvalidArgument for non-positive sizes.
DataSplit makeSynthetic(const SyntheticConfig& config);

}  // namespace cclab::trainer
