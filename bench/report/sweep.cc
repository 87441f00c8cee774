#include "bench/report/sweep.h"

#include <string>

#include "bench/report/usage_error.h"

namespace cclab::bench {
namespace {

std::int64_t next(const SweepOptions& s, std::int64_t size) {
  return s.stepFactor > 1 ? size * s.stepFactor : size + s.stepBytes;
}

}  // namespace

void validate(const SweepOptions& s) {
  if (s.minBytes < 0 || s.maxBytes < 0) throw UsageError("sizes must be >= 0");
  if (s.minBytes > s.maxBytes)
    throw UsageError("invalid sizes: minbytes (-b) " + std::to_string(s.minBytes) + " > maxbytes (-e) " +
                     std::to_string(s.maxBytes));
  if (s.stepFactor < 1) throw UsageError("step factor (-f) must be >= 1, got " + std::to_string(s.stepFactor));
  if (s.minBytes < s.maxBytes) {
    if (s.stepFactor > 1 && s.minBytes == 0)
      throw UsageError("a step factor (-f) needs a start size (-b) > 0");
    if (s.stepFactor == 1 && s.stepBytes <= 0)
      throw UsageError("step bytes (-i) must be > 0 when the step factor (-f) is 1");
    // Count without building the list (cheap for factors, bounded for increments).
    std::size_t n = 1;
    for (std::int64_t size = s.minBytes; size < s.maxBytes && n <= kMaxSweepSizes; size = next(s, size)) ++n;
    if (n > kMaxSweepSizes)
      throw UsageError("the sweep has more than " + std::to_string(kMaxSweepSizes) + " sizes; raise -i or -f");
  }
}

std::vector<std::int64_t> sweepSizes(const SweepOptions& s) {
  validate(s);
  std::vector<std::int64_t> sizes;
  for (std::int64_t size = s.minBytes; size <= s.maxBytes; size = next(s, size)) {
    sizes.push_back(size);
    if (s.minBytes == s.maxBytes) break;
  }
  return sizes;
}

}  // namespace cclab::bench
