// ResNet-50's parameter tensors, from the architecture: a 7x7/2 stem, four stages of bottleneck
// blocks (3, 4, 6, 3 blocks; widths 64, 128, 256, 512; expansion 4), global pooling, fc to 1000.
#include <string>

#include "trainer/model/synthetic.h"

namespace cclab::trainer {
namespace {

constexpr double kBatchNormFlopsPerElement = 4.0;  // (x - mean) * inv_std * gamma + beta

class Builder {
 public:
  explicit Builder(std::vector<SyntheticTensor>& out) : out_(out) {}

  // A k x k convolution cin -> cout whose output is hw x hw, followed by its batch norm.
  void convBn(const std::string& prefix, const std::string& conv, const std::string& bn, std::int64_t k,
              std::int64_t cin, std::int64_t cout, std::int64_t hw) {
    const double outputs = static_cast<double>(cout * hw * hw);
    out_.push_back({prefix + conv + ".weight", k * k * cin * cout, 2.0 * static_cast<double>(k * k * cin) * outputs});
    out_.push_back({prefix + bn + ".weight", cout, kBatchNormFlopsPerElement * outputs});
    out_.push_back({prefix + bn + ".bias", cout, 0.0});
  }

 private:
  std::vector<SyntheticTensor>& out_;
};

}  // namespace

ModelPreset resnet50Preset() {
  ModelPreset p{"resnet50", "ResNet-50 (224x224, 1000 classes): 53 conv + 53 batch norm + fc", {}};
  Builder b(p.tensors);
  b.convBn("", "conv1", "bn1", 7, 3, 64, 112);  // 224 -> 112, then 3x3/2 max pool -> 56
  constexpr int kBlocks[] = {3, 4, 6, 3};
  std::int64_t in = 64, hw = 56;
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t width = 64LL << stage, out = 4 * width;
    for (int block = 0; block < kBlocks[stage]; ++block) {
      const std::string prefix = "layer" + std::to_string(stage + 1) + "." + std::to_string(block) + ".";
      const bool down = block == 0 && stage > 0;  // stride 2 on the first block's 3x3 (stages 2-4)
      const std::int64_t outHw = down ? hw / 2 : hw;
      b.convBn(prefix, "conv1", "bn1", 1, in, width, hw);
      b.convBn(prefix, "conv2", "bn2", 3, width, width, outHw);
      b.convBn(prefix, "conv3", "bn3", 1, width, out, outHw);
      if (block == 0) b.convBn(prefix, "downsample.0", "downsample.1", 1, in, out, outHw);
      in = out;
      hw = outHw;
    }
  }
  constexpr std::int64_t kClasses = 1000;
  p.tensors.push_back({"fc.weight", in * kClasses, 2.0 * static_cast<double>(in * kClasses)});
  p.tensors.push_back({"fc.bias", kClasses, 0.0});
  return p;
}

}  // namespace cclab::trainer
