// Plan lowering: a Plan and a slice size become ordered lists of GPU steps, one list ("program") per
// (rank, channel): a rank's channels are independent programs, so an ordering runs them side by side
// (the events ordering on one stream per channel, the ll kernel on separate thread blocks, as NCCL's
// channels run on separate SMs).
//
// The CUDA executor pulls: the receiver of a message does the work. Every Recv / RecvReduce slice
// becomes one step on the receiving program that reads the sender's buffer directly (peer load), and
// every local Copy one step; a ReduceAll slice becomes p steps folding every rank's range in rank order
// (a copy of rank 0's, then a reduce of each next one), so every rank gets the plan's bits. Send
// slices do no work of their own and only order the two sides:
//   - data ready: the receiver's step waits until the sender's program finished every step that
//     precedes the send in that program (or the program's start, when none does);
//   - write after send: a sender's step that overwrites a range it sent (aliases resolved, see
//     buffer_alias.h) waits until the receiver's step that read it finished; sends still unread at
//     the end become the program's final waits (the caller may reuse the buffer afterwards).
// Phase deps (plan.h, Plan::deps): "channel c's phase p after channel c''s phases <= q" makes the
// first step of program (r, c) in a phase >= p wait for program (r, c')'s last step of phases <= q
// (nothing when it has none). A phase that opens with a send gets a gate step first (count 0: no data,
// only the waits), which is then the send's data-ready step, so its receivers (and the staging plan's
// `ready`) inherit the dep. Channels linked by deps may touch the same elements, so write after send
// also looks at the rank's other programs: a step overwriting a range that another program of its
// rank sent before it in dep order waits for that send's reader (vector clocks over the rank's
// programs, through the gates' waits).
// Steps of one program run in order (one stream, or one group of blocks), so a wait names only the
// latest step of each other program. This is the plan interpreter's single-copy model (interpret.h)
// with an unbounded connection, so a plan that the interpreter runs cannot deadlock here. `issueOrder`
// is a topological order of all steps: host code that enqueues steps in it never waits on an event
// that is not yet recorded. Pure host logic, unit-tested on the CPU.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collectives/cuda/buffer_alias.h"
#include "collectives/plan/plan.h"

namespace cclab::cuda {

// "Program `program` has finished its step `step`"; step kStart means "the program has started" (its
// rank's buffers hold the caller's data).
struct StepRef {
  static constexpr std::int32_t kStart = -1;
  int program = 0;
  std::int32_t step = kStart;
  friend bool operator==(const StepRef&, const StepRef&) = default;
};

enum class StepKind : std::uint8_t { Copy, Reduce };

struct Step {
  StepKind kind = StepKind::Copy;
  plan::Range dst;    // written, on this program's rank
  plan::Range local;  // Reduce: the local operand, on this rank (dst = local (op) src)
  int srcRank = 0;    // whose memory src lies in (this rank for a local Copy)
  plan::Range src;    // read
  std::vector<StepRef> waits;  // on other programs; at most one per program (the latest)
  bool signals = false;        // some wait names this step

  // 0 for a gate step (phase deps): it moves nothing, only waits and signals.
  [[nodiscard]] std::int64_t count() const { return dst.count; }
};

struct RankProgram {
  int rank = 0;
  int channel = 0;
  std::int32_t eventBase = 0;  // steps of the rank's earlier programs (its step events are numbered on)
  std::vector<Step> steps;
  std::vector<StepRef> finalWaits;  // readers of this program's last sends
  bool startSignals = false;        // some wait names this program's start
};

struct LoweredPlan {
  int nranks = 0;
  std::int64_t sliceElems = 0;
  // Rank by rank, each rank's channels in order; every rank has at least one program (maybe empty).
  std::vector<RankProgram> programs;
  std::vector<int> firstProgram;    // per rank, then one past the last: rank r owns [first[r], first[r+1])
  std::vector<StepRef> issueOrder;  // every step once, dependencies first
  std::int64_t maxStepElems = 0;
  std::int64_t scratchCount = 0;  // the plan's scratch elements per rank
  // Per rank, bit (1 << plan::Buf) is set when some step (of any rank) touches that buffer of it:
  // the communicator rejects a null buffer the plan uses before anything is enqueued or captured.
  std::vector<std::uint8_t> usedBuffers;

  [[nodiscard]] std::size_t stepCount() const { return issueOrder.size(); }
  [[nodiscard]] std::span<const RankProgram> programsOf(int rank) const {
    const auto b = static_cast<std::size_t>(firstProgram[static_cast<std::size_t>(rank)]);
    const auto e = static_cast<std::size_t>(firstProgram[static_cast<std::size_t>(rank) + 1]);
    return std::span<const RankProgram>(programs).subspan(b, e - b);
  }
  // Steps of all of a rank's programs (the step events it needs).
  [[nodiscard]] std::size_t stepsOfRank(int rank) const;
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
// whose sends and receives do not match or whose order (phase deps included) has a cycle.
LoweredPlan lowerPlan(const plan::Plan& plan, std::int64_t sliceElems, std::span<const BufferAlias> aliases = {});

}  // namespace cclab::cuda
