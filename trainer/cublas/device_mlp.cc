#include "trainer/cublas/device_mlp.h"

#include <string>

#include "collectives/core/errors.h"

namespace cclab::trainer::cublas {

DeviceMlp::DeviceMlp(std::unique_ptr<OpRunner> runner, const ParameterLayout& layout, std::int64_t microBatch,
                     int microBatches, float gradScale, const SgdConfig& sgd)
    : runner_(std::move(runner)), count_(layout.parameterCount()), inputs_(layout.inputs()), microBatches_(microBatches),
      program_(buildStepProgram(layout, microBatch, 1.0F / static_cast<float>(microBatch * microBatches), gradScale, sgd)),
      lossHost_(static_cast<std::size_t>(microBatch * microBatches)) {
  checkProgram(program_, regionSizes(layout, microBatch, microBatches));
}

void DeviceMlp::run(const std::vector<Op>& ops) {
  for (const Op& op : ops) runner_->run(op);
}

void DeviceMlp::uploadParams(std::span<const float> host) {
  if (static_cast<std::int64_t>(host.size()) != count_) throw InvalidArgument("DeviceMlp: parameter vector has the wrong size");
  runner_->upload(params(), host.data(), host.size_bytes());
}

void DeviceMlp::downloadParams(std::span<float> host) {
  if (static_cast<std::int64_t>(host.size()) != count_) throw InvalidArgument("DeviceMlp: parameter vector has the wrong size");
  runner_->download(host.data(), params(), host.size_bytes());
  runner_->synchronize();
}

void DeviceMlp::beginStep() {
  forwards_ = 0;
  runner_->stepBegin();
  run(program_.zeroGrads);
}

void DeviceMlp::forward(int micro, std::span<const float> x, std::span<const int> y) {
  const std::int64_t b = program_.batch;
  if (micro < 0 || micro >= microBatches_ || static_cast<std::int64_t>(y.size()) != b ||
      static_cast<std::int64_t>(x.size()) != b * inputs_)
    throw InvalidArgument("DeviceMlp::forward: micro-batch " + std::to_string(micro) + " of " + std::to_string(y.size()) +
                          " rows does not fit the program (" + std::to_string(b) + " rows, " +
                          std::to_string(microBatches_) + " micro-batches)");
  runner_->upload(runner_->region(Region::Activation, 0), x.data(), x.size_bytes());
  runner_->upload(runner_->region(Region::Labels, 0), y.data(), y.size_bytes());
  run(program_.forward);
  run(lossFor(program_, micro));
  ++forwards_;
}

void DeviceMlp::backward(const LayerDoneFn& onLayerDone) {
  for (int l = static_cast<int>(program_.backward.size()) - 1; l >= 0; --l) {
    run(program_.backward[static_cast<std::size_t>(l)]);
    if (onLayerDone) onLayerDone(l);
  }
}

void DeviceMlp::sgd() { run(program_.sgd); }

StepLoss DeviceMlp::finishStep() {
  if (forwards_ != microBatches_)
    throw InvalidArgument("DeviceMlp: a step ran " + std::to_string(forwards_) + " of " + std::to_string(microBatches_) +
                          " micro-batches");
  runner_->stepEnd();
  runner_->download(lossHost_.data(), runner_->region(Region::LossRows, 0), lossHost_.size() * sizeof(double));
  runner_->synchronize();
  times_ = runner_->stepTimes();
  StepLoss out;
  for (double v : lossHost_) out.lossSum += v;
  out.samples = static_cast<std::int64_t>(lossHost_.size());
  return out;
}

}  // namespace cclab::trainer::cublas
