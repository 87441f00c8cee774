// The whole model's flat gradient as a list of units in forward order: first the preset's synthetic
// tensors (model/synthetic.h), then the implemented MLP's layers (weight and bias of a layer are one
// unit). Backward runs the units from the last to the first, so the MLP's layers (computed for real)
// come first and the synthetic ones follow; in the flat gradient every run of consecutive units is one
// contiguous range, which is what gradient buckets need. The MLP's own gradient is the tail
// [syntheticCount, total) (its parameters are the MLP's; synthetic tensors have no stored parameters:
// no math reads them).
//
// FLOPs per sample (the closed forms the compute model divides by a rate), counting matmuls only:
//   MLP layer in -> out: forward 2*in*out; backward 2*in*out for dW plus 2*in*out for dA on every
//     layer but the first (whose input gradient is not needed); bias adds and ReLU are not counted.
//   synthetic tensor: forward as its preset says; backward 2x forward (input and weight gradients).
//   optimiser: kSgdFlopsPerParameter per parameter per step (d = g*s + wd*w; v = mu*v + d; w -= lr*v).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/model/layout.h"
#include "trainer/model/synthetic.h"

namespace cclab::trainer {

inline constexpr double kSgdFlopsPerParameter = 7.0;

struct GradientUnit {
  std::string name;
  std::int64_t offset = 0;  // into the flat gradient
  std::int64_t count = 0;
  double forwardFlops = 0.0;   // per sample
  double backwardFlops = 0.0;  // per sample
  bool synthetic = false;
  int mlpLayer = -1;  // the MLP layer, or -1 for a synthetic tensor
};

class GradientUnits {
 public:
  GradientUnits(const ParameterLayout& mlp, const ModelPreset& preset);

  [[nodiscard]] const std::vector<GradientUnit>& units() const { return units_; }
  [[nodiscard]] int size() const { return static_cast<int>(units_.size()); }
  [[nodiscard]] const GradientUnit& unit(int u) const { return units_[static_cast<std::size_t>(u)]; }
  [[nodiscard]] int syntheticUnits() const { return syntheticUnits_; }      // = the first MLP layer's unit
  [[nodiscard]] std::int64_t syntheticCount() const { return syntheticCount_; }  // = the MLP's offset
  [[nodiscard]] std::int64_t totalCount() const { return units_.back().offset + units_.back().count; }
  [[nodiscard]] double forwardFlopsPerSample() const;
  [[nodiscard]] double backwardFlopsPerSample() const;
  [[nodiscard]] double updateFlops() const { return kSgdFlopsPerParameter * static_cast<double>(totalCount()); }

 private:
  std::vector<GradientUnit> units_;
  int syntheticUnits_ = 0;
  std::int64_t syntheticCount_ = 0;
};

}  // namespace cclab::trainer
