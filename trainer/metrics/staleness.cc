#include "trainer/metrics/staleness.h"

#include <numeric>

namespace cclab::trainer {

void StalenessHistogram::add(std::int64_t s) {
  if (s < 0) return;
  if (static_cast<std::size_t>(s) >= counts_.size()) counts_.resize(static_cast<std::size_t>(s) + 1, 0);
  ++counts_[static_cast<std::size_t>(s)];
}

void StalenessHistogram::merge(const StalenessHistogram& o) {
  if (o.counts_.size() > counts_.size()) counts_.resize(o.counts_.size(), 0);
  for (std::size_t i = 0; i < o.counts_.size(); ++i) counts_[i] += o.counts_[i];
}

std::int64_t StalenessHistogram::total() const { return std::accumulate(counts_.begin(), counts_.end(), std::int64_t{0}); }

std::int64_t StalenessHistogram::max() const {
  for (std::size_t i = counts_.size(); i > 0; --i)
    if (counts_[i - 1] > 0) return static_cast<std::int64_t>(i - 1);
  return 0;
}

double StalenessHistogram::mean() const {
  const std::int64_t n = total();
  if (n == 0) return 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < counts_.size(); ++i) sum += static_cast<double>(i) * static_cast<double>(counts_[i]);
  return sum / static_cast<double>(n);
}

std::int64_t StalenessHistogram::percentile(double q) const {
  const std::int64_t n = total();
  if (n == 0) return 0;
  const auto want = static_cast<std::int64_t>(q * static_cast<double>(n - 1));
  std::int64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen > want) return static_cast<std::int64_t>(i);
  }
  return max();
}

}  // namespace cclab::trainer
