// Mean loss and accuracy of a model over a whole dataset (forward only, in batches).
#pragma once

#include <cstdint>
#include <span>

#include "trainer/data/dataset.h"
#include "trainer/model/mlp.h"

namespace cclab::trainer {

inline constexpr std::int64_t kEvalBatch = 1000;

struct EvalResult {
  double loss = 0.0;
  double accuracy = 0.0;  // fraction in [0, 1]
};

EvalResult evaluate(const Mlp& model, std::span<const float> params, const Dataset& data,
                    std::int64_t batch = kEvalBatch);

}  // namespace cclab::trainer
