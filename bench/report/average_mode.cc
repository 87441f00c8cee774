#include "bench/report/average_mode.h"

#include <algorithm>
#include <numeric>

#include "bench/report/value_parse.h"

namespace cclab::bench {

AverageMode parseAverageMode(std::string_view text) {
  return static_cast<AverageMode>(parseInteger(text, 0, 3, "average mode (0=rank0, 1=avg, 2=min, 3=max)"));
}

std::string_view name(AverageMode m) {
  switch (m) {
    case AverageMode::Rank0: return "rank0";
    case AverageMode::Mean: return "avg";
    case AverageMode::Min: return "min";
    case AverageMode::Max: return "max";
  }
  return "?";
}

double combineTimes(AverageMode m, std::span<const double> t) {
  if (t.empty()) return 0;
  switch (m) {
    case AverageMode::Rank0: return t.front();
    case AverageMode::Mean: return std::accumulate(t.begin(), t.end(), 0.0) / static_cast<double>(t.size());
    case AverageMode::Min: return *std::min_element(t.begin(), t.end());
    case AverageMode::Max: return *std::max_element(t.begin(), t.end());
  }
  return t.front();
}

}  // namespace cclab::bench
