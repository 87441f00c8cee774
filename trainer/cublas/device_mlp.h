// One rank's MLP on a device: parameters, gradients, momentum and activations live in the runner's
// regions (device memory on the cuBLAS path) and never leave it during a step. Every call enqueues on
// the rank's stream; finishStep() is the step's only wait (this rank's stream, nothing else).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "trainer/cublas/gemm_program.h"
#include "trainer/cublas/op_runner.h"
#include "trainer/model/mlp.h"
#include "trainer/run/gradient_step.h"

namespace cclab::trainer::cublas {

class DeviceMlp {
 public:
  // microBatch rows per forward pass, microBatches of them per step (gradient accumulation);
  // gradScale multiplies the summed gradient in the SGD step (1 / workers).
  DeviceMlp(std::unique_ptr<OpRunner> runner, const ParameterLayout& layout, std::int64_t microBatch, int microBatches,
            float gradScale, const SgdConfig& sgd);

  [[nodiscard]] float* params() { return floats(Region::Params); }
  [[nodiscard]] float* grads() { return floats(Region::Grads); }
  [[nodiscard]] std::int64_t parameterCount() const { return count_; }
  [[nodiscard]] OpRunner& runner() { return *runner_; }

  void uploadParams(std::span<const float> host);
  void downloadParams(std::span<float> host);  // synchronizes this rank's stream

  void beginStep();  // zeroes the gradients
  // Micro-batch `micro` of the step: x is microBatch x inputs (row-major), y its labels; forward and loss.
  void forward(int micro, std::span<const float> x, std::span<const int> y);
  // Backward of the last forward; onLayerDone(l) once layer l's gradient ops are enqueued (l = L-1 .. 0).
  void backward(const LayerDoneFn& onLayerDone = {});
  void sgd();
  // Before a collective on params() or grads(): it runs after the compute enqueued so far.
  void handOff() {
    runner_->handOff();
    runner_->commBegin();
  }
  // Right after a collective is enqueued (times it).
  void collectiveEnqueued() { runner_->commEnd(); }
  // After the step's (or the broadcast's) collectives: the compute enqueued next runs after them.
  void join() { runner_->join(); }
  // Waits for this rank's streams; returns the step's loss over all micro-batches.
  StepLoss finishStep();
  // The last finished step's time split (op_runner.h).
  [[nodiscard]] const StepTimes& stepTimes() const { return times_; }

 private:
  float* floats(Region r, int index = 0) { return static_cast<float*>(runner_->region(r, index)); }
  void run(const std::vector<Op>& ops);

  std::unique_ptr<OpRunner> runner_;
  std::int64_t count_;
  std::int64_t inputs_;
  int microBatches_;
  StepProgram program_;
  std::vector<double> lossHost_;
  int forwards_ = 0;
  StepTimes times_;
};

}  // namespace cclab::trainer::cublas
