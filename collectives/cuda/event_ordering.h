// The events ordering: each step of a lowered plan is one reduce-copy kernel on its rank's stream,
// preceded by cudaStreamWaitEvent on the events of the steps it waits for and followed by an event
// record when another rank waits for it. Steps are enqueued in the lowering's issue order, so an event
// is always recorded before any stream waits on it. Ranks whose devices lack peer access read through
// a staging buffer (cudaMemcpyPeerAsync, then the kernel).
#pragma once

#include "collectives/cuda/ordering.h"

namespace cclab::cuda {

// Enqueues `call` on the ranks' lanes (cuda_context.h): straggler spin, start events, steps, final waits, Avg's
// division, and each rank's done event. Also used inside a graph capture (graph_ordering.cc).
void enqueueSteps(const PreparedCall& call, CudaContext& context);

class EventOrdering final : public Ordering {
 public:
  explicit EventOrdering(CudaContext& context) : context_(context) {}
  [[nodiscard]] std::string name() const override { return "events"; }
  void run(const PreparedCall& call) override { enqueueSteps(call, context_); }

 private:
  CudaContext& context_;
};

}  // namespace cclab::cuda
