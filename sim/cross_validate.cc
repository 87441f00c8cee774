#include "sim/cross_validate.h"

#include <algorithm>
#include <set>

namespace cclab::sim {

std::vector<Bytes> crossValidationSizes(const std::vector<Measurement>& fitSet) {
  std::set<Bytes> sizes;
  for (const auto& m : fitSet)
    for (const auto& p : m.points) sizes.insert(p.size);
  if (sizes.size() < 3) return {};
  return {sizes.begin(), sizes.end()};
}

std::vector<PointError> leaveOneSizeOut(const TopologySpec& initial, const std::vector<Measurement>& fitSet,
                                        const CalibrationOptions& options) {
  std::vector<PointError> out;
  for (const Bytes held : crossValidationSizes(fitSet)) {
    std::vector<Measurement> rest, only;
    for (const auto& m : fitSet) {
      Measurement a = m, b = m;
      std::erase_if(a.points, [&](const MeasuredPoint& p) { return p.size == held; });
      std::erase_if(b.points, [&](const MeasuredPoint& p) { return p.size != held; });
      if (!a.points.empty()) rest.push_back(std::move(a));
      if (!b.points.empty()) only.push_back(std::move(b));
    }
    const CalibrationResult r = calibrate(initial, rest, {}, options);
    const auto errors = evaluate(r.spec, only, options.sliceBytes);
    out.insert(out.end(), errors.begin(), errors.end());
  }
  return out;
}

}  // namespace cclab::sim
