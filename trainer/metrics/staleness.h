// A histogram of staleness values (updates applied between a worker's pull and its push).
#pragma once

#include <cstdint>
#include <vector>

namespace cclab::trainer {

class StalenessHistogram {
 public:
  void add(std::int64_t staleness);
  void merge(const StalenessHistogram& other);
  [[nodiscard]] const std::vector<std::int64_t>& counts() const { return counts_; }  // counts()[s] = pushes with staleness s
  [[nodiscard]] std::int64_t total() const;
  [[nodiscard]] std::int64_t max() const;
  [[nodiscard]] double mean() const;
  [[nodiscard]] std::int64_t percentile(double q) const;  // q in [0, 1]; 0 for an empty histogram

 private:
  std::vector<std::int64_t> counts_;
};

}  // namespace cclab::trainer
