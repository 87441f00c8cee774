// What the run's model is, for the reports: the implemented MLP, the preset's synthetic tensors, the
// gradient the allreduces carry, its buckets, and the FLOPs the compute model divides by its rate.
#pragma once

#include <cstdint>
#include <string>

#include "nlohmann/json.hpp"
#include "trainer/run/train_config.h"

namespace cclab::trainer {

struct ModelInfo {
  std::string preset;
  std::string description;
  std::int64_t parameters = 0;             // implemented + synthetic
  std::int64_t implementedParameters = 0;  // the MLP's (trained on the data)
  std::int64_t syntheticParameters = 0;
  int tensors = 0;                         // parameter tensors: 2 per MLP layer + the preset's
  int syntheticTensors = 0;
  std::int64_t gradientBytes = 0;          // fp32
  int buckets = 0;                         // sync: allreduces per step
  double forwardFlopsPerSample = 0.0;
  double backwardFlopsPerSample = 0.0;
  double updateFlops = 0.0;                // per step and worker
  double stepFlopsPerWorker = 0.0;         // worker batch x (forward + backward) + update
};

ModelInfo describeModel(const TrainConfig& c);
nlohmann::json modelJson(const ModelInfo& m);
nlohmann::json computeModelJson(const ComputeModel& m);  // null without one

}  // namespace cclab::trainer
