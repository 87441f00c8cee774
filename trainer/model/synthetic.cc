#include "trainer/model/synthetic.h"

#include <numeric>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::trainer {

std::int64_t ModelPreset::parameterCount() const {
  return std::accumulate(tensors.begin(), tensors.end(), std::int64_t{0},
                         [](std::int64_t a, const SyntheticTensor& t) { return a + t.count; });
}

double ModelPreset::forwardFlopsPerSample() const {
  return std::accumulate(tensors.begin(), tensors.end(), 0.0,
                         [](double a, const SyntheticTensor& t) { return a + t.forwardFlopsPerSample; });
}

ModelPreset modelPreset(std::string_view name) {
  if (name == "mlp") return {"mlp", "the implemented MLP only", {}};
  if (name == "resnet50") return resnet50Preset();
  if (name == "bert-base") return bertBasePreset();
  throw InvalidArgument("unknown --model '" + std::string(name) + "' (mlp, resnet50, bert-base)");
}

}  // namespace cclab::trainer
