// Model presets shaped like known networks' gradients (`--model resnet50`, `--model bert-base`).
// Their layers' math is not implemented here: each parameter tensor becomes a *synthetic* gradient of
// the real size, with the real forward FLOP count (per sample), so the gradient exchange (bucket
// count and sizes) and, with a compute model (device/compute_model.h), the compute time are a real
// network's. The implemented MLP (`--layers`) still trains on the data; the accuracy reflects it only.
// The tensor lists are derived here from the published architectures, not copied from anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cclab::trainer {

struct SyntheticTensor {
  std::string name;                   // e.g. "layer3.2.conv2.weight"
  std::int64_t count = 0;             // parameters (= gradient elements)
  double forwardFlopsPerSample = 0.0; // the forward FLOPs this tensor's layer does per sample (0 for a bias
                                      // whose work is counted with its weight)
};

struct ModelPreset {
  std::string name;                    // "mlp" (no synthetic tensors), "resnet50", "bert-base"
  std::string description;
  std::vector<SyntheticTensor> tensors;  // forward order

  [[nodiscard]] std::int64_t parameterCount() const;
  [[nodiscard]] double forwardFlopsPerSample() const;
};

// "mlp", "resnet50", "bert-base"; throws InvalidArgument naming the choices.
ModelPreset modelPreset(std::string_view name);

// ResNet-50 (He et al. 2016, torchvision's v1.5: stride 2 on the 3x3 conv), 224x224 input, 1000
// classes: 53 convolutions (no bias), 53 batch norms (weight, bias), fc 2048 -> 1000 (weight, bias).
ModelPreset resnet50Preset();
// BERT-base (Devlin et al. 2019): 12 layers, hidden 768, 12 heads, FFN 3072, vocabulary 30522,
// 512 positions, 2 token types, with the pooler (no pre-training heads); sequences of kBertSequence tokens.
inline constexpr std::int64_t kBertSequence = 128;
ModelPreset bertBasePreset();

}  // namespace cclab::trainer
