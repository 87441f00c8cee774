// How the steps of a lowered plan are ordered on the GPU; one implementation per ordering:
//   events (event_ordering.h): each step is a kernel on its rank's stream; waits are events.
//   graph  (graph_ordering.h): the same, captured once per call shape as a CUDA graph and replayed.
//   ll     (ll_ordering.h):    one persistent kernel per device; waits are flags in device memory.
// Every ordering leaves each rank's stream ordered after the rank's part of the collective (and
// after the readers of its buffers), so work the caller enqueues later on that stream is safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/call/vocabulary.h"
#include "collectives/core/dtype.h"
#include "collectives/cuda/cuda_context.h"
#include "collectives/cuda/lowering.h"
#include "collectives/plan/plan.h"

namespace cclab::cuda {

// A rank's buffers by plan::Buf (input, output, scratch).
struct RankPointers {
  void* base[3] = {nullptr, nullptr, nullptr};
};

// Avg's division on one rank after the collective (count 0: none).
struct AvgFinish {
  void* data = nullptr;
  std::int64_t count = 0;
};

// Everything an ordering needs for one collective call, resolved by the communicator.
struct PreparedCall {
  std::string planKey;  // identifies `lowered` (PlanRequest::key)
  std::shared_ptr<const LoweredPlan> lowered;
  DataType type = DataType::Float32;
  ReduceOp op = ReduceOp::Sum;
  std::vector<RankPointers> pointers;  // by rank
  std::vector<AvgFinish> avg;          // by rank
  int stragglerRank = -1;
  std::uint64_t stragglerDelayNs = 0;
  std::uint64_t timeoutNs = 0;
};

// The address of element range `r` of a rank's memory; throws InvalidArgument for a null buffer
// that the plan uses.
void* address(const RankPointers& p, int rank, const plan::Range& r, std::size_t elemSize);

class Ordering {
 public:
  virtual ~Ordering() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // Enqueues the call on the ranks' streams; returns without waiting for the GPU.
  virtual void run(const PreparedCall& call) = 0;
  // After the streams drained: throws what the device reported (the ll ordering's timeouts).
  virtual void checkErrors() {}
};

// Makes the ordering `order` (names and parsing: CudaOrder in collectives/communicator.h).
std::unique_ptr<Ordering> makeOrdering(CudaOrder order, CudaContext& context);

}  // namespace cclab::cuda
