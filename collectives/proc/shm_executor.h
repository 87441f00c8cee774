// A plan executor for ranks that are processes on one node: the single-copy idea of the host executor
// (collectives/host/host_executor.h) across processes. Every rank's buffers (input, output, scratch)
// live in a shared segment of its own ("/cclab-<job>-<rank>-buf") that every peer maps; a send publishes
// the byte offset of the slice inside the sender's segment in a slot of the channel (from, to), the
// receiver copies or reduces straight from its mapping of the sender's segment, then counts the slot
// consumed. The channels, the abort word and the arrival counters live in rank 0's control segment
// ("/cclab-<job>-0-ctrl"). The segments, joining, liveness, abort and the blame of a failed wait are the
// node layer's (ShmNode, shm_node.h): waits are shared_wait.h's, bounded, and a timeout in one rank sets
// the abort word so every other rank stops at once too. A wait also checks, every kLivenessCheck, that
// the peer it waits for still runs (its pid and start time are in the control segment), so a killed
// rank is noticed in about that time rather than at the timeout.
//
// Small calls have a second path, LL (shm_ll.cc, after the host's: collectives/core/ll_ring.h): one
// ring of flagged lines per ordered pair of ranks in the control segment, into which a send writes its
// data with the flag in each 8-byte word; the receiver polls the words themselves. A tiny allreduce is
// then one line written and one line polled per peer, with no posted/consumed counters and no wait for
// the reader (runLl; llFits says which plans fit).
//
// The ranks agree on the job id and the sizes beforehand (the process backend through MPI,
// collectives/proc/proc_communicator.h; tests by fork).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/call/vocabulary.h"
#include "collectives/core/ll_ring.h"
#include "collectives/plan/plan.h"
#include "collectives/plan/plan_runner.h"
#include "collectives/proc/shared_wait.h"
#include "collectives/proc/shm_node.h"

namespace cclab::proc {

using ShmRunOptions = cclab::RunOptions;  // the executors' one options struct (collectives/call/vocabulary.h)

// Where a rank's buffers lie in its segment (byte offsets; scratch may be empty).
struct ShmLayout {
  std::size_t input = 0;
  std::size_t output = 0;
  std::size_t scratch = 0;
};

// A rank's buffers for the LL path, anywhere in this process (LL copies the data into its lines).
struct LocalBuffers {
  const std::byte* input = nullptr;
  std::byte* output = nullptr;
  std::byte* scratch = nullptr;
};

// Lines per LL ring (one per ordered pair of a node's ranks): kShmLlMaxRingLines (4 KiB, 2 KiB of
// data: the host's LL threshold is 1 KiB), fewer when nranks^2 rings would pass kShmLlBudgetBytes;
// below kShmLlMinRingLines the node has no LL path (0).
inline constexpr std::int64_t kShmLlMaxRingLines = 64;
inline constexpr std::int64_t kShmLlMinRingLines = 16;
inline constexpr std::size_t kShmLlBudgetBytes = std::size_t{8} << 20;
std::int64_t shmLlRingLines(int nodeRanks);

class ShmExecutor {
 public:
  static constexpr int kMaxRanks = ShmNode::kMaxRanks;  // ranks on one node

  // Rank `rank` of `nranks` joins job `job`: rank 0 creates the control segment, every rank creates its
  // buffer segment of `bufferBytes` and maps every peer's; joining takes at most `timeout` in all, else
  // TimeoutError naming the segment that did not appear.
  ShmExecutor(const std::string& job, int rank, int nranks, std::size_t bufferBytes, std::chrono::nanoseconds timeout);
  // One node of a job: `globalRank` is this process's rank in the job, `node` the ranks sharing the node
  // (the lowest creates the control segment; segments are named by their local index); plans have the
  // job's ranks, and ops with peers off the node go through `remote` (not owned; may not be null when
  // some rank is off the node).
  ShmExecutor(const std::string& job, int globalRank, const NodeRanks& node, std::size_t bufferBytes,
              std::chrono::nanoseconds timeout, RemoteLinks* remote);
  ShmExecutor(const ShmExecutor&) = delete;
  ShmExecutor& operator=(const ShmExecutor&) = delete;

  [[nodiscard]] int rank() const { return node_.globalOf(node_.rank()); }  // in the job
  [[nodiscard]] int nranks() const { return jobRanks_; }
  // This rank's buffer segment (fill the input here; the output is read here).
  [[nodiscard]] std::byte* buffer() const { return node_.buffer(); }
  [[nodiscard]] std::size_t bufferBytes() const { return node_.bufferBytes(); }

  // Runs this rank's ops of `plan` on buffers at `layout` in its segment; every rank must run the same
  // sequence of plans with the same layout. Throws TimeoutError naming the lost ranks (and then aborts
  // every peer's waits); once the job is aborted, every later call throws the same.
  void run(const plan::Plan& plan, const ShmLayout& layout, const ShmRunOptions& options);

  // Whether `plan` can run on the LL path (runLl) with elements of `elemSize` bytes: every rank of the
  // job is on this node, the node has LL rings, and the lines one call sends on each ordered pair
  // (all channels together) fit in a ring.
  [[nodiscard]] bool llFits(const plan::Plan& plan, std::size_t elemSize) const;
  // Runs this rank's ops of `plan` (which must fit: llFits, checked by the caller once per plan) over
  // the LL rings, whole ops in op order; options' sliceElems is ignored. Failures as run(). Every rank
  // runs the same sequence of calls, LL or not.
  void runLl(const plan::Plan& plan, const LocalBuffers& buffers, const ShmRunOptions& options);
  [[nodiscard]] std::int64_t llRingLines() const { return llRingLines_; }

  // Ends every peer's waits now (they throw naming this rank).
  void abort() { node_.abort(); }

 private:
  class RankRun;
  class LlRun;

  // The node's sizes as the LL path reads them (llFits, runLl), and the LL rings it asks the node for
  // (declared before node_, which is built with them).
  int nranks_;    // ranks on this node
  int jobRanks_;
  std::int64_t llRingLines_ = 0;    // 0: no LL rings on this node
  ShmNode node_;  // the segments, joining, abort, liveness and the blame of failed waits
  // This rank's private LL positions (units), per local peer: written to (peer), read from (peer).
  std::vector<LlLink<SharedWord>> llTo_, llFrom_;
  std::vector<LlLink<SharedWord>*> llSent_, llRead_;  // LlRun's, kept between calls
  std::vector<std::byte> llIncoming_;
  plan::RunnerState<plan::NoLaneData> llRunner_;
  plan::RunnerState<plan::NoLaneData> slotRunner_;  // RankRun's, kept between calls (no allocation per call)
};

}  // namespace cclab::proc
