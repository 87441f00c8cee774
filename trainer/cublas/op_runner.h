// What executes a StepProgram's ops for one rank: the CPU reference (interpret.h) or the cuBLAS path
// (cublas_runner.h). Ops are enqueued in order on the rank's compute stream; the rank's collectives
// run on its communication stream (Communicator::rankStream), as DDP's NCCL stream: handOff() orders
// the next collective after the compute enqueued so far, join() orders the compute enqueued next after
// the collectives enqueued so far, so a bucket's allreduce overlaps the backward of the layers below.
// Nothing is complete until synchronize(), which waits for this rank's two streams only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "trainer/cublas/gemm_program.h"

namespace cclab::trainer::cublas {

// One step's time split, read after synchronize(): device time (CUDA events) on the cuBLAS path,
// host time on the CPU reference (where everything runs one after the other).
struct StepTimes {
  std::int64_t stepNs = 0;     // the compute stream from stepBegin() to stepEnd()
  std::int64_t commNs = 0;     // the collectives: sum over commBegin()..commEnd() on the communication stream
  std::int64_t exposedNs = 0;  // the compute stream waiting for the collectives (at join())
};

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
  // The compute stream idles for `ns` after the ops enqueued so far, as a slower device would take
  // longer (--straggler): a spin kernel on the cuBLAS path, a sleep on the CPU reference.
  virtual void delay(std::int64_t ns) = 0;
  virtual void handOff() = 0;
  virtual void join() = 0;
  virtual void synchronize() = 0;
  // Step timers: stepBegin() before the step's first op, commBegin() right after a handOff() and
  // commEnd() right after the collective is enqueued, stepEnd() after the step's last op; the join()
  // of the step times the compute stream's wait. stepTimes() after synchronize().
  virtual void stepBegin() = 0;
  virtual void commBegin() = 0;
  virtual void commEnd() = 0;
  virtual void stepEnd() = 0;
  [[nodiscard]] virtual StepTimes stepTimes() = 0;
  [[nodiscard]] virtual std::string description() const = 0;
};

}  // namespace cclab::trainer::cublas
