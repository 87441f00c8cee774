// Plan lowering: a Plan and a slice size become, for every rank, an ordered list of GPU steps.
//
// The CUDA executor pulls: the receiver of a message does the work. Every Recv / RecvReduce slice
// becomes one step on the receiving rank that reads the sender's buffer directly (peer load), and
// every local Copy one step; Send slices do no work of their own and only order the two sides:
//   - data ready: the receiver's step waits until the sender finished every step that precedes the
//     send in the sender's order (or the sender's start, when none does);
//   - write after send: a sender's step that overwrites a range it sent (aliases resolved, see
//     buffer_alias.h) waits until the receiver's step that read it finished; sends still unread at
//     the end become the rank's final waits (the caller may reuse the buffer afterwards).
// Steps of one rank run in order (one stream, or one group of blocks), so a wait names only the
// latest step of each peer. This is the plan interpreter's single-copy model (interpret.h) with an
// unbounded channel, so a plan that the interpreter runs cannot deadlock here. `issueOrder` is a
// topological order of all steps: host code that enqueues steps in it never waits on an event that
// is not yet recorded. Pure host logic, unit-tested on the CPU.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collectives/cuda/buffer_alias.h"
#include "collectives/plan/plan.h"

namespace cclab::cuda {

// "Rank `rank` has finished its step `step`"; step kStart means "rank `rank` has started" (its
// buffers hold the caller's data).
struct StepRef {
  static constexpr std::int32_t kStart = -1;
  int rank = 0;
  std::int32_t step = kStart;
  friend bool operator==(const StepRef&, const StepRef&) = default;
};

enum class StepKind : std::uint8_t { Copy, Reduce };

struct Step {
  StepKind kind = StepKind::Copy;
  plan::Range dst;    // written, on this rank
  plan::Range local;  // Reduce: the local operand, on this rank (dst = local (op) src)
  int srcRank = 0;    // whose memory src lies in (this rank for a local Copy)
  plan::Range src;    // read
  std::vector<StepRef> waits;  // on other ranks; at most one per rank (the latest)
  bool signals = false;        // some wait names this step

  [[nodiscard]] std::int64_t count() const { return dst.count; }
};

struct RankProgram {
  std::vector<Step> steps;
  std::vector<StepRef> finalWaits;  // readers of this rank's last sends
  bool startSignals = false;        // some wait names this rank's start
};

struct LoweredPlan {
  int nranks = 0;
  std::int64_t sliceElems = 0;
  std::vector<RankProgram> ranks;
  std::vector<StepRef> issueOrder;  // every step once, dependencies first
  std::int64_t maxStepElems = 0;
  std::int64_t scratchCount = 0;  // the plan's scratch elements per rank
  // Per rank, bit (1 << plan::Buf) is set when some step (of any rank) touches that buffer of it:
  // the communicator rejects a null buffer the plan uses before anything is enqueued or captured.
  std::vector<std::uint8_t> usedBuffers;

  [[nodiscard]] std::size_t stepCount() const { return issueOrder.size(); }
};

// Device-memory traffic of a lowered plan, in elements, summed over all ranks' steps: a Copy reads
// its source and writes its destination; a Reduce reads both operands and writes its destination.
// This is the byte count the bandwidth target is measured with (docs/cuda.md).
struct Traffic {
  std::int64_t readElems = 0;
  std::int64_t writtenElems = 0;
  [[nodiscard]] std::int64_t totalElems() const { return readElems + writtenElems; }
};
Traffic traffic(const LoweredPlan& lowered);

// `aliases`: one per rank, or empty for "no rank is in place". Throws std::logic_error for a plan
// whose sends and receives do not match or whose order has a cycle.
LoweredPlan lowerPlan(const plan::Plan& plan, std::int64_t sliceElems, std::span<const BufferAlias> aliases = {});

}  // namespace cclab::cuda
