#include "trainer/model/gradient_units.h"

#include <numeric>

namespace cclab::trainer {

GradientUnits::GradientUnits(const ParameterLayout& mlp, const ModelPreset& preset) {
  std::int64_t offset = 0;
  for (const SyntheticTensor& t : preset.tensors) {
    units_.push_back({t.name, offset, t.count, t.forwardFlopsPerSample, 2.0 * t.forwardFlopsPerSample, true, -1});
    offset += t.count;
  }
  syntheticUnits_ = static_cast<int>(units_.size());
  syntheticCount_ = offset;
  for (int l = 0; l < mlp.layerCount(); ++l) {
    const LayerSlice& s = mlp.layer(l);
    const double matmul = 2.0 * static_cast<double>(s.in * s.out);
    units_.push_back({"mlp." + std::to_string(l), offset + s.begin(), s.count(), matmul, l > 0 ? 2.0 * matmul : matmul,
                      false, l});
  }
}

double GradientUnits::forwardFlopsPerSample() const {
  return std::accumulate(units_.begin(), units_.end(), 0.0, [](double a, const GradientUnit& u) { return a + u.forwardFlops; });
}

double GradientUnits::backwardFlopsPerSample() const {
  return std::accumulate(units_.begin(), units_.end(), 0.0, [](double a, const GradientUnit& u) { return a + u.backwardFlops; });
}

}  // namespace cclab::trainer
