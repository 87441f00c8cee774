// Plan lowering, passes 4 and 5: what the orderings need to issue the steps (lowering_state.h lists
// the passes). Once every wait is known (passes 2 and 3):
//   - pass 4 marks the steps and program starts some wait names (the events ordering records an
//     event for those only), the buffers each rank's memory is used through (the communicator rejects a
//     null buffer the plan uses before anything is enqueued) and the largest step;
//   - pass 5 builds the issue order: a topological order of every step under program order and the
//     waits, programs taken round robin as far as each can go, so host code that enqueues steps in it
//     never waits on an event that is not yet recorded. No program that can go means a cycle.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "collectives/cuda/lowering_state.h"

namespace cclab::cuda::lowering {

void markSignalsAndBuffers(LoweringState& s) {
  auto mark = [&](const StepRef& w) {
    auto& prog = s.program(w.program);
    if (w.step == StepRef::kStart)
      prog.startSignals = true;
    else
      at(prog.steps, w.step).signals = true;
  };
  s.out.usedBuffers.assign(static_cast<std::size_t>(s.out.nranks), 0);
  auto use = [&](int rank, const plan::Range& r) {
    if (r.count <= 0) return;
    at(s.out.usedBuffers, rank) |= static_cast<std::uint8_t>(1U << static_cast<unsigned>(r.buf));
  };
  for (const auto& prog : s.out.programs)
    for (const Step& step : prog.steps) {
      use(prog.rank, step.dst);
      use(step.srcRank, step.src);
      if (step.kind == StepKind::Reduce) use(prog.rank, step.local);
    }
  for (const auto& prog : s.out.programs) {
    for (const Step& step : prog.steps) {
      for (const StepRef& w : step.waits) mark(w);
      s.out.maxStepElems = std::max(s.out.maxStepElems, step.count());
    }
    for (const StepRef& w : prog.finalWaits) mark(w);
  }
}

void buildIssueOrder(LoweringState& s) {
  std::vector<std::int32_t> issued;  // per program: its steps in the order so far
  const auto ready = [&](int p, std::int32_t i) {
    const auto& waits = s.step({p, i}).waits;
    return std::all_of(waits.begin(), waits.end(), [&](const StepRef& w) { return w.step < at(issued, w.program); });
  };
  if (!roundRobin(s.out.programs, issued, ready, [&](int p, std::int32_t i) { s.out.issueOrder.push_back({p, i}); }))
    throw std::logic_error("lowerPlan: the steps of plan " + std::string(plan::name(s.plan.collective)) + "/" +
                           std::string(plan::name(s.plan.algorithm)) + " wait for each other in a cycle");
}

}  // namespace cclab::cuda::lowering
