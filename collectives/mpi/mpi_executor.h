// A plan executor over MPI point-to-point: the path between nodes, and every pair of a job that spans
// (real or emulated) nodes.
//
// Each rank runs its ops of the plan on the executor core (plan::PlanRunner, plan_runner.h), in the
// executors' order (plan::SliceWalker), channel by channel interleaved (a channel that waits never stalls another; one at a phase whose deps, plan.h, are not
// met waits for this rank's other channels): a Send slice is an MPI_Isend from the
// rank's own buffer (several in flight), a Recv slice an MPI_Irecv straight into its destination, a
// RecvReduce or ReduceAll slice an MPI_Irecv into staging and then the reduction (ReduceAll folds
// every rank's slice in rank order, so every rank gets the same bits). The message tag is the plan
// channel, so MPI's non-overtaking rule (per source, tag and communicator) is the plan's FIFO per
// (channel, from, to). A rank that wants to overwrite a range it sent first completes those sends
// (single-copy model, as the interpreter's). Waits poll with MPI_Test: busy for `spin`, then yielding
// the core; no progress for `timeout` throws TimeoutError naming the rank(s) waited for.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "collectives/call/vocabulary.h"
#include "collectives/core/dtype.h"
#include "collectives/host/rank_memory.h"
#include "collectives/mpi/mpi_world.h"
#include "collectives/plan/plan.h"

namespace cclab::mpi {

using MpiMemory = host::RankMemory;  // a rank's input, output and scratch (collectives/host/rank_memory.h)

using MpiRunOptions = cclab::RunOptions;  // the executors' one options struct (collectives/call/vocabulary.h)

class MpiExecutor {
 public:
  static constexpr std::size_t kMaxSendsInFlight = 64;
  explicit MpiExecutor(const World& world);
  ~MpiExecutor();
  MpiExecutor(const MpiExecutor&) = delete;
  MpiExecutor& operator=(const MpiExecutor&) = delete;
  // Runs this process's rank's ops of `plan` (plan.nranks must be the world's size).
  void run(const plan::Plan& plan, const MpiMemory& memory, const MpiRunOptions& options);

 private:
  struct Runner;  // the runner's state (plan_runner.h), kept between calls: no allocation per call
  const World& world_;
  std::unique_ptr<Runner> runner_;
};

}  // namespace cclab::mpi
