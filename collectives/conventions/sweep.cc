// nccl-tests' size sweep (sweep.h): validated and counted before any size is generated.
#include "collectives/conventions/sweep.h"

#include <charconv>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::conventions {
namespace {

// The size after `size`, or -1 when it would pass `max` (or an int64).
std::int64_t next(const SweepOptions& s, std::int64_t size) {
  if (s.stepFactor > 1) return size > s.maxBytes / s.stepFactor ? -1 : size * s.stepFactor;
  return size > s.maxBytes - s.stepBytes ? -1 : size + s.stepBytes;
}

std::string tooMany() {
  return "the sweep has more than " + std::to_string(kMaxSweepSizes) + " sizes; raise -i or -f, or narrow -b..-e";
}

}  // namespace

std::int64_t parseStepFactor(std::string_view text, std::string_view flag) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw InvalidArgument(std::string(flag) + ": '" + std::string(text) +
                          "' is not a whole-number step factor (nccl-tests' -f is an integer)");
  if (value < 1 || value > kMaxStepFactor)
    throw InvalidArgument(std::string(flag) + ": step factor must be in [1, " + std::to_string(kMaxStepFactor) +
                          "], got " + std::string(text));
  return value;
}

std::size_t sweepCount(const SweepOptions& s) {
  if (s.minBytes < 0 || s.maxBytes < 0) throw InvalidArgument("-b/-e: sizes must be >= 0");
  if (s.minBytes > s.maxBytes)
    throw InvalidArgument("-b/-e: minbytes " + std::to_string(s.minBytes) + " > maxbytes " + std::to_string(s.maxBytes));
  if (s.stepFactor < 1) throw InvalidArgument("-f: step factor must be >= 1, got " + std::to_string(s.stepFactor));
  if (s.minBytes == s.maxBytes) return 1;
  if (s.stepFactor > 1) {
    if (s.minBytes == 0) throw InvalidArgument("-b: a step factor (-f) needs a start size > 0 (0 times -f stays 0)");
    std::size_t n = 1;  // at most 62 steps: a factor >= 2 doubles at least
    for (std::int64_t size = next(s, s.minBytes); size >= 0; size = next(s, size)) ++n;
    return n;
  }
  if (s.stepBytes <= 0) throw InvalidArgument("-i: step bytes must be > 0 when the step factor (-f) is 1");
  const std::int64_t steps = (s.maxBytes - s.minBytes) / s.stepBytes;  // no overflow: both in [0, max]
  if (steps >= static_cast<std::int64_t>(kMaxSweepSizes)) throw InvalidArgument(tooMany());
  return static_cast<std::size_t>(steps) + 1;
}

std::vector<std::int64_t> sweepSizes(const SweepOptions& s) {
  const std::size_t n = sweepCount(s);
  std::vector<std::int64_t> sizes;
  sizes.reserve(n);
  sizes.push_back(s.minBytes);
  while (sizes.size() < n) sizes.push_back(next(s, sizes.back()));
  return sizes;
}

}  // namespace cclab::conventions
