// Per-rank calls on a backend whose work is issued for all ranks at once.
//
// With MPI semantics each rank's thread calls the collective on its own buffers. The CUDA executor
// needs every rank's buffers before it can enqueue any step (a step reads its peer's buffer), so
// run() meets the other ranks here: the last rank to arrive issues the whole group, and every rank
// returns once that is done (an exception from issuing reaches every rank). A rank waits at most the
// call's timeout and then throws TimeoutError naming the ranks that did not arrive. Pure host logic,
// unit-tested on the CPU.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <vector>

#include "collectives/call/vocabulary.h"
#include "collectives/core/errors.h"

namespace cclab::cuda {

class Rendezvous {
 public:
  using IssueFn = std::function<void(const CollectiveArgs&, std::span<const RankBuffers>, const CollectiveOptions&)>;

  explicit Rendezvous(int nranks);

  // Blocks until all ranks arrived and `issue` ran (on the last rank's thread), or until
  // options.timeout. Ranks must agree on args and on the options that shape the schedule
  // (algorithm, slice size); a rank that disagrees gets InvalidArgument.
  void arrive(int rank, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options,
              const IssueFn& issue);

 private:
  int nranks_;
  std::mutex mutex_;
  std::condition_variable done_;
  std::uint64_t generation_ = 0;
  int arrived_ = 0;
  std::vector<char> present_;
  std::vector<char> gaveUp_;  // arrived, then timed out, while others still wait
  std::vector<RankBuffers> buffers_;
  CollectiveArgs args_;
  CollectiveOptions options_;
  std::exception_ptr error_;  // of the last completed generation
};

}  // namespace cclab::cuda
