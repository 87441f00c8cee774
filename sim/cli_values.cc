// Command-line values of cclab-sim (cli_values.h).
#include "sim/cli_values.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "collectives/core/errors.h"

namespace cclab::sim {

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

namespace {

int wholeNumber(const std::string& s, const std::string& whole, const std::string& flag) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 1 || v > kMaxScaleNodes)
    throw InvalidArgument(flag + " '" + whole + "' must be A..B (powers of two from A) or a list like 1,2,8, each in 1.." +
                          std::to_string(kMaxScaleNodes));
  return v;
}

}  // namespace

std::vector<int> parseRange(const std::string& s, const std::string& flag) {
  std::vector<int> out;
  const auto dots = s.find("..");
  if (dots == std::string::npos) {
    for (const auto& x : splitList(s)) out.push_back(wholeNumber(x, s, flag));
  } else {
    const int a = wholeNumber(s.substr(0, dots), s, flag), b = wholeNumber(s.substr(dots + 2), s, flag);
    if (b < a) throw InvalidArgument(flag + " '" + s + "': the end is below the start");
    for (long v = a; v <= b; v *= 2) out.push_back(static_cast<int>(v));
  }
  if (out.empty()) throw InvalidArgument(flag + " '" + s + "' names no value");
  return out;
}

Straggler stragglerOf(const std::string& text, int rank, double slowdown, double delayUs, bool computeOnly) {
  if (!text.empty()) return parseStraggler(text, BareNumber::ComputeAndLinkFactor);
  if (rank < 0) throw InvalidArgument("--rank must be >= 0 (got " + std::to_string(rank) + ")");
  if (!(slowdown >= 1 && slowdown <= kMaxStragglerFactor))
    throw InvalidArgument("--slowdown must be in 1.." + std::to_string(static_cast<int>(kMaxStragglerFactor)));
  const double maxDelayUs = std::chrono::duration<double, std::micro>(kMaxStragglerDelay).count();
  if (!(delayUs >= 0 && delayUs <= maxDelayUs))
    throw InvalidArgument("--delay must be in 0.." + std::to_string(static_cast<long long>(maxDelayUs)) + " us");
  Straggler s;
  s.rank = rank;
  s.startDelay = std::chrono::nanoseconds(std::llround(delayUs * 1e3));
  s.computeFactor = slowdown;
  s.linkFactor = computeOnly ? 1.0 : slowdown;
  return s;
}

}  // namespace cclab::sim

namespace cclab::sim {

int exitCodeFor(const std::exception& e) {
  const bool usage = dynamic_cast<const InvalidArgument*>(&e) != nullptr || dynamic_cast<const std::invalid_argument*>(&e) != nullptr;
  return usage ? 2 : 1;
}

}  // namespace cclab::sim
