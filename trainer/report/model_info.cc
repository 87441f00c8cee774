#include "trainer/report/model_info.h"

#include "trainer/model/gradient_units.h"
#include "trainer/sync/buckets.h"

namespace cclab::trainer {

ModelInfo describeModel(const TrainConfig& c) {
  const ParameterLayout mlp(c.widths);
  const ModelPreset preset = modelPreset(c.model);
  const GradientUnits units(mlp, preset);
  ModelInfo m;
  m.preset = preset.name;
  m.description = preset.description;
  m.implementedParameters = mlp.parameterCount();
  m.syntheticParameters = units.syntheticCount();
  m.parameters = units.totalCount();
  m.syntheticTensors = units.syntheticUnits();
  m.tensors = m.syntheticTensors + 2 * mlp.layerCount();
  m.gradientBytes = m.parameters * static_cast<std::int64_t>(sizeof(float));
  m.buckets = static_cast<int>(planBuckets(units, c.sync.firstBucketBytes, c.sync.bucketBytes).size());
  m.forwardFlopsPerSample = units.forwardFlopsPerSample();
  m.backwardFlopsPerSample = units.backwardFlopsPerSample();
  m.updateFlops = units.updateFlops();
  m.stepFlopsPerWorker = static_cast<double>(c.workerBatch()) * (m.forwardFlopsPerSample + m.backwardFlopsPerSample) + m.updateFlops;
  return m;
}

nlohmann::json modelJson(const ModelInfo& m) {
  return {{"preset", m.preset},
          {"description", m.description},
          {"parameters", m.parameters},
          {"implemented_parameters", m.implementedParameters},
          {"synthetic_parameters", m.syntheticParameters},
          {"tensors", m.tensors},
          {"synthetic_tensors", m.syntheticTensors},
          {"gradient_bytes", m.gradientBytes},
          {"buckets", m.buckets},
          {"forward_flops_per_sample", m.forwardFlopsPerSample},
          {"backward_flops_per_sample", m.backwardFlopsPerSample},
          {"update_flops", m.updateFlops},
          {"step_flops_per_worker", m.stepFlopsPerWorker},
          {"accuracy_reflects",
           m.syntheticParameters > 0 ? "the implemented MLP only (synthetic tensors carry gradients, not math)"
                                     : "the whole model"}};
}

nlohmann::json computeModelJson(const ComputeModel& m) {
  if (!m.active()) return nullptr;
  return {{"name", m.name}, {"tflops", m.flopsPerS / 1e12}, {"precision", m.precision}, {"source", m.source}};
}

}  // namespace cclab::trainer
