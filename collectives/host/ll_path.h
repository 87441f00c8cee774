// The host communicator's small-call path: which calls run on the LL executor (ll_executor.h), and
// running them with a plan cache per rank (no lock shared between ranks on the way in).
//
// A call goes to LL when its largest buffer is at most maxBytes() (the measured crossover,
// kLlDefaultMaxBytes, or CCLAB_LL_MAX_BYTES) and its plan fits the LL rings (LlExecutor::fits);
// otherwise run() returns false and the caller runs it on the slot executor. Both tests depend only on
// the call's arguments, never on the rank, so every rank of a call takes the same path.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <tuple>
#include <vector>

#include "collectives/call/planned_call.h"
#include "collectives/call/vocabulary.h"
#include "collectives/host/ll_executor.h"

namespace cclab::host {

// Calls up to this many bytes (largest buffer) use LL: above it the slot executor's single copy wins
// (LL moves each byte twice over the cores' caches, as data+flag words written and then read, against
// once for a single copy). Measured with
// `CCLAB_BIND_RANKS=1 nice -n -20 bench/ll_crossover --ranks 2 3 4 8 --max 16K --rounds 3`
// (docs/results/cpu-peers.md, "Small-message thresholds"): at 2 ranks the fastest LL
// column beat the fastest slot column up to 1 KiB (3.4 vs 11.5 µs) and lost from 2 KiB on (16.6 vs
// 3.6 µs); the oversubscribed rows (3, 4, 8 ranks) were too noisy to move it.
inline constexpr std::size_t kLlDefaultMaxBytes = 1024;
// CCLAB_LL_MAX_BYTES when set (bytes, 0 turns LL off, at most kLlMaxBytesLimit; collectives/core/knobs.h),
// else the default; a malformed value throws InvalidArgument naming the variable.
inline constexpr std::size_t kLlMaxBytesLimit = std::size_t{1} << 20;
std::size_t llMaxBytesFromEnvironment(std::size_t fallback = kLlDefaultMaxBytes);


// One rank's part of a call on LL, lowered (what run() works out per call from the arguments), so
// that a loop of identical group calls hands the ranks a ready call: HostCommunicator lowers a group
// call once for every rank and reuses it while the calls stay the same (runLowered).
struct LlRankCall {
  RankMemory memory;
  RunOptions options;
  void* avgOutput = nullptr;  // ReduceOp::Avg: the output this rank divides by nranks afterwards
  std::size_t avgCount = 0;
  DataType type = DataType::Float32;
};

class LlPath {
 public:
  LlPath(int nranks, std::chrono::nanoseconds spin, std::size_t maxBytes = llMaxBytesFromEnvironment(),
         LlConfig config = {});

  // Runs rank `rank`'s part of the call on LL and returns true, or returns false (nothing done) when
  // the call is not for LL. `algo` is the resolved algorithm and `shape` the plan's (channels, ranks
  // per node), as the slot path would use them; args were checked by the caller.
  bool run(int rank, const CollectiveArgs& args, plan::Algorithm algo, plan::PlanShape shape, RankBuffers buffers,
           const CollectiveOptions& options);
  bool run(int rank, const CollectiveArgs& args, plan::Algorithm algo, RankBuffers buffers,
           const CollectiveOptions& options) {
    return run(rank, args, algo, plan::PlanShape{}, buffers, options);
  }

  // The call's plan when it is for LL (the rule of run(), through rank `rank`'s cache), else null.
  const plan::Plan* planFor(int rank, const CollectiveArgs& args, plan::Algorithm algo, plan::PlanShape shape);
  // Runs ranks `ranks` (ascending, the first one this thread's: it binds to its CPU like run()) of a
  // call that planFor said is for LL, cooperatively on this thread (LlExecutor::runRanks); buffers
  // indexed by rank. No straggler delay.
  void runShare(std::span<const int> ranks, const CollectiveArgs& args, const plan::Plan& plan,
                std::span<const RankBuffers> buffers, const CollectiveOptions& options, std::chrono::nanoseconds spin);

  // Rank `rank`'s part of a call that planFor said is for LL: checks its buffers (InvalidArgument on a
  // null one) and sizes its scratch. Touches rank `rank`'s cache: only while that rank runs no call
  // (a group call's driver lowers every rank before it hands them the call).
  LlRankCall lower(int rank, const CollectiveArgs& args, const plan::Plan& plan, RankBuffers buffers,
                   const CollectiveOptions& options);
  // Runs a lowered call on rank `rank`'s thread (binds it like run()).
  void runLowered(int rank, const plan::Plan& plan, const LlRankCall& call);
  // A lowered group call whose plan LlExecutor::gathers: rank r > 0 only sends its input to rank 0
  // (runGatherSend); rank 0 (runGatherFold) folds and writes every rank's output (outputs[q], rank q's
  // receive buffer), Avg's division included. Bind like runLowered.
  void runGatherSend(int rank, const plan::Plan& plan, const LlRankCall& call);
  void runGatherFold(const plan::Plan& plan, const LlRankCall& call, std::span<std::byte* const> outputs);

  [[nodiscard]] std::size_t maxBytes() const { return maxBytes_; }
  // Pins each rank's thread to CPU rank mod cores at its first call (CCLAB_BIND_RANKS=1, as mpirun
  // binds each process to a core by default at 2 ranks): for side-by-side measurements on a loaded
  // machine, where unbound rank threads may share one core. Before the first call only.
  void bindRanks(bool on) { bind_ = on; }
  LlExecutor& executor() { return executor_; }
  [[nodiscard]] const LlExecutor& executor() const { return executor_; }

 private:
  // collective, algorithm, count, root, element size, channels, ranks per node
  using Key = std::tuple<plan::Collective, plan::Algorithm, std::int64_t, int, std::size_t, int, int>;
  struct Entry {
    std::shared_ptr<const plan::Plan> plan;  // null: the call does not fit
  };
  struct alignas(64) RankCache {
    PlanCache<Entry, Key> plans;
    std::vector<std::byte> scratch;
    std::vector<RankMemory> share;  // runShare's memories, when this rank leads a share
    bool bound = false;
  };
  const Entry& entryFor(RankCache& cache, const Key& key);
  // Rank `rank`'s cache, its thread bound to its CPU first when CCLAB_BIND_RANKS asks for it.
  RankCache& boundCache(int rank);

  std::size_t maxBytes_;
  bool bind_ = false;
  LlExecutor executor_;
  std::unique_ptr<RankCache[]> caches_;  // caches_[r]: touched by rank r's thread only
};

// ArrivalStats of two executors' calls as one (calls add up, lateness adds up, maxima are maxed).
ArrivalStats mergeArrivalStats(const ArrivalStats& a, const ArrivalStats& b);

}  // namespace cclab::host
