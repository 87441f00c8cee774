// The CPU reference of the device path: runs a StepProgram's ops on host memory with exactly the
// semantics cublasSgemm and the device kernels give them (column-major, beta = 0 never reads c), the
// elementwise ops through the same functions the kernels call (elementwise.h). GEMMs accumulate in
// double: a higher-precision reference for the device's float GEMMs.
#pragma once

#include <memory>
#include <vector>

#include "trainer/cublas/gemm_program.h"
#include "trainer/cublas/op_runner.h"

namespace cclab::trainer::cublas {

// Host memory for every region of `sizes`, zeroed.
class HostRegions {
 public:
  explicit HostRegions(const RegionSizes& sizes);
  [[nodiscard]] const RegionSizes& sizes() const { return sizes_; }
  [[nodiscard]] void* at(Region r, int index);
  [[nodiscard]] float* floats(const MatrixRef& m) { return static_cast<float*>(at(m.region, m.index)) + m.offset; }

 private:
  RegionSizes sizes_;
  std::vector<std::vector<float>> floats_;  // Params, Grads, Velocity, Activation[i]..., Delta[0], Delta[1]
  std::vector<int> labels_, correct_;
  std::vector<double> lossRows_;
};

// Checks the op against the regions (checkOp), then runs it.
void interpret(const Op& op, HostRegions& regions);

// An OpRunner over HostRegions: every op runs when enqueued.
std::unique_ptr<OpRunner> makeHostRunner(const RegionSizes& sizes);

}  // namespace cclab::trainer::cublas
