// BERT-base's parameter tensors, from the architecture (as a BertModel: embeddings, 12 encoder layers,
// pooler). FLOPs per sample of kBertSequence tokens: 2 per multiply-add of every matmul; attention's
// QK^T and AV (2 x 2 * seq^2 * hidden) are counted with the attention output weight; layer norm 8
// per element, GELU 8 per element (counted with the norm's weight and the FFN bias).
#include <string>

#include "trainer/model/synthetic.h"

namespace cclab::trainer {
namespace {

constexpr std::int64_t kHidden = 768, kLayers = 12, kFfn = 3072, kVocab = 30522, kPositions = 512, kTypes = 2;
constexpr double kNormFlopsPerElement = 8.0;
constexpr double kGeluFlopsPerElement = 8.0;

void linear(std::vector<SyntheticTensor>& t, const std::string& name, std::int64_t in, std::int64_t out, double rows,
            double extraFlops = 0.0) {
  t.push_back({name + ".weight", in * out, 2.0 * rows * static_cast<double>(in * out) + extraFlops});
  t.push_back({name + ".bias", out, rows * static_cast<double>(out)});
}

void norm(std::vector<SyntheticTensor>& t, const std::string& name, double rows) {
  t.push_back({name + ".weight", kHidden, kNormFlopsPerElement * rows * kHidden});
  t.push_back({name + ".bias", kHidden, 0.0});
}

}  // namespace

ModelPreset bertBasePreset() {
  ModelPreset p{"bert-base", "BERT-base (12 layers, hidden 768, sequence " + std::to_string(kBertSequence) + ")", {}};
  auto& t = p.tensors;
  const auto seq = static_cast<double>(kBertSequence);
  t.push_back({"embeddings.word_embeddings.weight", kVocab * kHidden, 0.0});  // a lookup
  t.push_back({"embeddings.position_embeddings.weight", kPositions * kHidden, seq * kHidden});
  t.push_back({"embeddings.token_type_embeddings.weight", kTypes * kHidden, seq * kHidden});
  norm(t, "embeddings.LayerNorm", seq);
  const double attention = 2.0 * 2.0 * seq * seq * kHidden;  // QK^T and AV over all heads
  for (int l = 0; l < kLayers; ++l) {
    const std::string prefix = "encoder.layer." + std::to_string(l) + ".";
    linear(t, prefix + "attention.self.query", kHidden, kHidden, seq);
    linear(t, prefix + "attention.self.key", kHidden, kHidden, seq);
    linear(t, prefix + "attention.self.value", kHidden, kHidden, seq);
    linear(t, prefix + "attention.output.dense", kHidden, kHidden, seq, attention);
    norm(t, prefix + "attention.output.LayerNorm", seq);
    linear(t, prefix + "intermediate.dense", kHidden, kFfn, seq);
    t.back().forwardFlopsPerSample += kGeluFlopsPerElement * seq * kFfn;
    linear(t, prefix + "output.dense", kFfn, kHidden, seq);
    norm(t, prefix + "output.LayerNorm", seq);
  }
  linear(t, "pooler.dense", kHidden, kHidden, 1.0);  // the [CLS] token only
  return p;
}

}  // namespace cclab::trainer
