// Plan lowering, pass 3: write after send (lowering_state.h lists the passes).
// The executor pulls, so a sent range is read by the receiver's step long after the send "happened"
// on the sender: a step of the sending rank that overwrites the range must wait for that reader, and
// sends still unread at the end become the sending program's final waits (the caller may reuse the
// buffer afterwards). Without phase deps a rank's channels never touch the same elements (plan.h), so
// a step need only look at its own program's earlier sends. With deps a step also looks at the sends
// of the rank's other programs that come before it in dep order. That order is a partial one, so the
// pass walks the rank's steps in a topological order of program order and the gates' waits and gives
// each step a vector clock over the rank's programs (the latest step of each known finished before it
// starts, transitively): a send precedes a step once the step's clock has passed the step before the
// send. A send is covered once some step known to have finished before waits for its reader; a step
// adds no second wait for it.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "collectives/cuda/lowering_state.h"

namespace cclab::cuda::lowering {

void orderWritesAfterSends(LoweringState& s, int r) {
  const int first = at(s.out.firstProgram, r);
  const std::span<const RankProgram> programs = s.out.programsOf(r);
  const int np = static_cast<int>(programs.size());
  const bool crossPrograms = !s.plan.deps.empty() && np > 1;
  std::vector<SentRange> sends;  // the rank's, program by program, by position
  std::vector<std::size_t> sendBegin(programs.size() + 1, 0);  // program a's: [sendBegin[a], sendBegin[a + 1])
  for (int a = 0; a < np; ++a) {
    auto& own = at(s.sent, first + a);
    std::stable_sort(own.begin(), own.end(), [](const SentRange& x, const SentRange& y) { return x.position < y.position; });
    sends.insert(sends.end(), own.begin(), own.end());
    at(sendBegin, a + 1) = sends.size();
  }
  // The walk's state per program a of the rank (a: its place from `first`).
  using Clock = std::vector<std::int32_t>;  // per program of the rank: a step (kStart: started)
  struct Walk {
    std::vector<Clock> clocks;          // per step i: each program's latest step known finished before i starts
    std::vector<const Gate*> gates;     // per step: the gate it is, if any
    std::vector<std::size_t> nextSend;  // per program b: b's first send (in `sends`) not known to precede yet
    std::vector<std::size_t> active;    // sends known to precede that a later step may overwrite
  };
  std::vector<Walk> walks(programs.size());
  for (int a = 0; a < np; ++a) {
    Walk& walk = at(walks, a);
    walk.clocks.resize(at(programs, a).steps.size());
    walk.gates.assign(at(programs, a).steps.size(), nullptr);
    walk.nextSend.assign(sendBegin.begin(), sendBegin.end() - 1);
  }
  for (const Gate& g : s.gates)
    if (g.program >= first && g.program < first + np) at(at(walks, g.program - first).gates, g.step) = &g;

  std::vector<std::int32_t> done;  // per program: its steps walked so far
  const auto gateOpen = [&](int a, std::int32_t i) {
    const Gate* gate = at(at(walks, a).gates, i);
    return !gate || std::all_of(gate->knows.begin(), gate->knows.end(),
                                [&](const StepRef& w) { return w.step < at(done, w.program - first); });
  };
  const bool ordered = roundRobin(programs, done, gateOpen, [&](int a, std::int32_t i) {
    Walk& walk = at(walks, a);
    const Gate* gate = at(walk.gates, i);
    Clock clock = i == 0 ? Clock(programs.size(), StepRef::kStart) : at(walk.clocks, i - 1);
    at(clock, a) = i - 1;
    if (gate)
      for (const StepRef& w : gate->knows) {
        if (w.step == StepRef::kStart) continue;
        const int b = w.program - first;
        const Clock& theirs = at(at(walks, b).clocks, w.step);
        for (std::size_t x = 0; x < clock.size(); ++x) clock[x] = std::max(clock[x], theirs[x]);
        at(clock, b) = std::max(at(clock, b), w.step);
      }
    // Sends now known to precede this step (the send at position k follows step k-1).
    for (int b = 0; b < np; ++b) {
      if (b != a && !crossPrograms) continue;
      auto& next = at(walk.nextSend, b);
      while (next < at(sendBegin, b + 1) && sends[next].position - 1 <= at(clock, b)) walk.active.push_back(next++);
    }
    Step& step = s.step({first + a, i});
    std::erase_if(walk.active, [&](std::size_t k) {
      SentRange& sent = sends[k];
      if (!overlaps(sent.src, step.dst, s.aliasOf(r))) return false;
      const bool covered = std::any_of(sent.coveredBy.begin(), sent.coveredBy.end(),
                                       [&](const StepRef& c) { return at(clock, c.program - first) >= c.step; });
      if (!covered) {
        addWait(step.waits, sent.reader);
        sent.coveredBy.push_back({first + a, i});
      }
      return true;
    });
    at(walk.clocks, i) = std::move(clock);
  });
  if (!ordered)
    throw std::logic_error("lowerPlan: the phase deps of rank " + std::to_string(r) + " wait for each other in a cycle");
  for (const SentRange& sent : sends)
    if (sent.coveredBy.empty()) addWait(s.program(sent.program).finalWaits, sent.reader);
}

}  // namespace cclab::cuda::lowering
