#include "sim/cross_validate.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

namespace cclab::sim {

std::vector<Bytes> crossValidationSizes(const std::vector<Measurement>& fitSet) {
  std::set<Bytes> sizes;
  for (const auto& m : fitSet)
    for (const auto& p : m.points) sizes.insert(p.size);
  if (sizes.size() < 3) return {};
  return {sizes.begin(), sizes.end()};
}

namespace {

// The fit set without size `held` (rest) and with only it (only).
std::pair<std::vector<Measurement>, std::vector<Measurement>> fold(const std::vector<Measurement>& fitSet, Bytes held) {
  std::vector<Measurement> rest, only;
  for (const auto& m : fitSet) {
    Measurement a = m, b = m;
    std::erase_if(a.points, [&](const MeasuredPoint& p) { return p.size == held; });
    std::erase_if(b.points, [&](const MeasuredPoint& p) { return p.size != held; });
    if (!a.points.empty()) rest.push_back(std::move(a));
    if (!b.points.empty()) only.push_back(std::move(b));
  }
  return {std::move(rest), std::move(only)};
}

}  // namespace

std::string crossValidationSkipped(const std::vector<Measurement>& fitSet, std::size_t nparams) {
  const auto sizes = crossValidationSizes(fitSet);
  if (sizes.empty()) {
    std::set<Bytes> distinct;
    for (const auto& m : fitSet)
      for (const auto& p : m.points) distinct.insert(p.size);
    return "the fitted points have " + std::to_string(distinct.size()) + " distinct size(s); leaving one out needs at least 3";
  }
  for (const Bytes held : sizes) {
    const std::size_t left = distinctPoints(fold(fitSet, held).first);
    if (left < nparams)
      return "without size " + std::to_string(held) + " bytes " + std::to_string(left) + " distinct point(s) are left for " +
             std::to_string(nparams) + " parameters";
  }
  return "";
}

std::vector<PointError> leaveOneSizeOut(const TopologySpec& initial, const std::vector<Measurement>& fitSet,
                                        const CalibrationOptions& options) {
  std::vector<PointError> out;
  if (!crossValidationSkipped(fitSet, fitParams(initial, options).size()).empty()) return out;
  for (const Bytes held : crossValidationSizes(fitSet)) {
    const auto [rest, only] = fold(fitSet, held);
    const CalibrationResult r = calibrate(initial, rest, {}, options);
    const auto errors = evaluate(r.spec, only, options.sliceBytes);
    out.insert(out.end(), errors.begin(), errors.end());
  }
  return out;
}

}  // namespace cclab::sim
