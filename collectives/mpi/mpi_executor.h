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
//
// Who is blamed: with a node (the process backend's CCLAB_PROC_TRANSPORT=mpi: a proc::ShmNode of the
// ranks that share this node, used for nothing but this) every rank publishes whom it waits for and
// counts its calls there, and a wait that runs out blames by the shared-memory transport's rule
// (shm_node.h): the ranks that never started the call, else the end of the chain of waits (a stopped
// process or a rank that waits for nobody), never itself; a chain that leaves the node waits
// remoteGrace longer, so the node that can see the rank holding the job up reports first. Without a
// node (tests that run the executor alone) the line names the ranks this rank waited for.
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

namespace cclab::proc {
class ShmNode;
}

namespace cclab::mpi {

using MpiMemory = host::RankMemory;  // a rank's input, output and scratch (collectives/host/rank_memory.h)

using MpiRunOptions = cclab::RunOptions;  // the executors' one options struct (collectives/call/vocabulary.h)

class MpiExecutor {
 public:
  static constexpr std::size_t kMaxSendsInFlight = 64;
  // `node` (not owned, may be null): where this rank's waits are published and blamed (see above).
  explicit MpiExecutor(const World& world, proc::ShmNode* node = nullptr);
  ~MpiExecutor();
  MpiExecutor(const MpiExecutor&) = delete;
  MpiExecutor& operator=(const MpiExecutor&) = delete;
  // Runs this process's rank's ops of `plan` (plan.nranks must be the world's size).
  void run(const plan::Plan& plan, const MpiMemory& memory, const MpiRunOptions& options);

 private:
  struct Runner;  // the runner's state (plan_runner.h), kept between calls: no allocation per call
  const World& world_;
  proc::ShmNode* node_;
  std::unique_ptr<Runner> runner_;
};

}  // namespace cclab::mpi
