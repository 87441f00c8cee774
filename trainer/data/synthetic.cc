#include "trainer/data/synthetic.h"

#include <cmath>
#include <random>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::trainer {
namespace {

Dataset sample(const std::vector<float>& centers, const SyntheticConfig& c, std::int64_t n, std::mt19937_64& rng) {
  Dataset d;
  d.features = c.features;
  d.classes = c.classes;
  d.values.resize(static_cast<std::size_t>(n * c.features));
  d.labels.resize(static_cast<std::size_t>(n));
  std::uniform_int_distribution<int> pick(0, c.classes - 1);
  std::normal_distribution<float> noise(0.0F, static_cast<float>(c.noise));
  for (std::int64_t i = 0; i < n; ++i) {
    const int y = pick(rng);
    d.labels[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(y);
    for (std::int64_t f = 0; f < c.features; ++f)
      d.values[static_cast<std::size_t>(i * c.features + f)] = centers[static_cast<std::size_t>(y * c.features + f)] + noise(rng);
  }
  return d;
}

}  // namespace

DataSplit makeSynthetic(const SyntheticConfig& c) {
  constexpr int kMaxClasses = 256;
  if (c.trainSamples < 1 || c.testSamples < 1 || c.features < 1 || c.classes < 2 || c.classes > kMaxClasses)
    throw InvalidArgument("synthetic data needs >= 1 samples and features and 2..256 classes");
  std::mt19937_64 rng(c.seed);
  std::normal_distribution<float> unit(0.0F, 1.0F);
  const auto scale = static_cast<float>(kCenterSpread / std::sqrt(static_cast<double>(c.features)));
  std::vector<float> centers(static_cast<std::size_t>(c.classes * c.features));
  for (float& v : centers) v = unit(rng) * scale;
  DataSplit s;
  s.name = "synthetic";
  s.train = sample(centers, c, c.trainSamples, rng);
  s.test = sample(centers, c, c.testSamples, rng);
  return s;
}

}  // namespace cclab::trainer
