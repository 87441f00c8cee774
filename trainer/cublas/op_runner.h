// What executes a StepProgram's ops for one rank: the CPU reference (interpret.h) or the cuBLAS path
// (cublas_runner.h). Ops are enqueued in order on the rank's one stream; nothing is complete until
// synchronize(), which waits for this rank's stream only.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "trainer/cublas/gemm_program.h"

namespace cclab::trainer::cublas {

class OpRunner {
 public:
  virtual ~OpRunner() = default;
  // The region's memory (device memory on the cuBLAS path), zeroed at creation.
  [[nodiscard]] virtual void* region(Region r, int index) = 0;
  virtual void run(const Op& op) = 0;
  // Host -> region memory; `src` may be reused once it returns.
  virtual void upload(void* dst, const void* src, std::size_t bytes) = 0;
  // Region memory -> host, after the ops enqueued before it; `dst` is complete after synchronize().
  virtual void download(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void synchronize() = 0;
  [[nodiscard]] virtual std::string description() const = 0;
};

}  // namespace cclab::trainer::cublas
