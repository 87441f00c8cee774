// The trainer's use of the Communicator: sum-allreduce a range of a rank's flat gradient, and
// broadcast the initial parameters. On the host backend the collective runs in place on the
// gradient itself; on a device backend (cuda, nccl) the range is staged through a per-rank device
// buffer (copyToRank, allreduce, synchronize, copyFromRank) while the model still computes on the CPU.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collectives/communicator.h"

namespace cclab::trainer {

class GradientExchange {
 public:
  // Allocates the staging buffers a device backend needs (one per rank, `parameters` floats).
  GradientExchange(Communicator& comm, CollectiveOptions options, std::int64_t parameters);

  [[nodiscard]] int nranks() const { return comm_.nranks(); }
  // Blocks the calling thread (acting as `rank`) until the sum over ranks is in `data`.
  void allReduceSum(int rank, std::span<float> data, std::int64_t offset);
  void broadcast(int rank, std::span<float> data, int root);

 private:
  float* staged(int rank, std::span<float> data, std::int64_t offset);
  void unstage(int rank, std::span<float> data, const float* device);

  Communicator& comm_;
  CollectiveOptions options_;
  bool staged_;
  std::vector<Buffer> device_;
};

}  // namespace cclab::trainer
