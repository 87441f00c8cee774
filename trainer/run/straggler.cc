#include "trainer/run/straggler.h"

#include <charconv>
#include <thread>

#include "collectives/core/errors.h"
#include "fmt/format.h"

namespace cclab::trainer {

StragglerSpec parseStraggler(std::string_view s) {
  const auto bad = [&] { return InvalidArgument("bad --straggler '" + std::string(s) + "' (expected RANK:FACTOR, e.g. 1:1.4)"); };
  const auto colon = s.find(':');
  if (colon == std::string_view::npos) throw bad();
  StragglerSpec spec;
  const auto [p1, e1] = std::from_chars(s.data(), s.data() + colon, spec.rank);
  if (e1 != std::errc() || p1 != s.data() + colon || spec.rank < 0) throw bad();
  const std::string factor(s.substr(colon + 1));
  std::size_t used = 0;
  try {
    spec.factor = std::stod(factor, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  if (used != factor.size() || !(spec.factor >= 1.0)) throw bad();
  return spec;
}

std::string format(const StragglerSpec& s) { return s.rank < 0 ? "none" : fmt::format("{}:{}", s.rank, s.factor); }

std::int64_t ComputeThrottle::pace(const RunClock& clock, std::int64_t sinceNs) {
  if (factor_ == 1.0) return 0;
  const std::int64_t start = clock.nowNs();
  const auto delay = static_cast<std::int64_t>(static_cast<double>(start - sinceNs) * (factor_ - 1.0));
  if (delay > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(delay));
  return clock.nowNs() - start;
}

}  // namespace cclab::trainer
