// The graph ordering: the events ordering's enqueue (event_ordering.h) captured once per call shape
// (plan, type, op, buffers, straggler) into one CUDA graph that spans every rank's lane, then
// replayed with a single cudaGraphLaunch on the origin: rank 0's stream, which every rank of device 0
// shares (cuda_context.h), so on one GPU a call is one launch. The capture forks from the origin to
// each rank's lane and joins back; other devices' shared streams are joined to the replay with an
// event each way. Graphs are cached (bounded); a new shape costs one capture and instantiation.
#pragma once

#include <map>
#include <string>

#include "collectives/cuda/ordering.h"

namespace cclab::cuda {

class GraphOrdering final : public Ordering {
 public:
  static constexpr std::size_t kMaxGraphs = 64;

  explicit GraphOrdering(CudaContext& context);
  [[nodiscard]] std::string name() const override { return "graph"; }
  void run(const PreparedCall& call) override;
  [[nodiscard]] std::size_t cachedGraphs() const { return graphs_.size(); }

 private:
  GraphExec capture(const PreparedCall& call);

  CudaContext& context_;
  int originDevice_;
  cudaStream_t origin_;
  Event fork_, replayed_;
  std::map<std::string, GraphExec> graphs_;
};

}  // namespace cclab::cuda
