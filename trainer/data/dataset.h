// A labelled dataset in memory: float features (row-major, one row per sample) and class labels.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace cclab::trainer {

struct Dataset {
  std::int64_t features = 0;  // values per sample
  int classes = 0;
  std::vector<float> values;           // size() x features
  std::vector<std::uint8_t> labels;    // size(), each < classes

  [[nodiscard]] std::int64_t size() const { return static_cast<std::int64_t>(labels.size()); }
  [[nodiscard]] std::span<const float> row(std::int64_t i) const {
    return {values.data() + i * features, static_cast<std::size_t>(features)};
  }
};

struct DataSplit {
  std::string name;  // "fashion-mnist", "synthetic"
  Dataset train;
  Dataset test;
};

}  // namespace cclab::trainer
