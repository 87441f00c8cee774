// The state the plan lowering's passes share (private to the lowering; lowering.h describes the
// model). lowerPlan (lowering.cc) runs five passes over one LoweringState:
//   1. collect steps      (lowering.cc)             the plan's ops, dispatched slice by slice, become
//                                                   each program's steps; sends and receives are
//                                                   recorded per connection, phase deps as gates
//   2. pair sends         (lowering_pairing.cc)     the k-th send on a connection feeds the k-th
//                                                   receive: the data-ready waits
//   3. order writes       (lowering_write_order.cc) a step that overwrites a sent range waits for its
//                                                   reader (vector clocks over a rank's programs)
//   4. mark signals       (lowering_issue_order.cc) which steps are waited for, the buffers used
//   5. build issue order  (lowering_issue_order.cc) a topological order of every step
// Pass 1 is the lowering's op dispatch (plan/op_dispatch.h); passes 2-5 only order the steps it made.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "collectives/cuda/buffer_alias.h"
#include "collectives/cuda/lowering.h"
#include "collectives/plan/plan.h"

namespace cclab::cuda::lowering {

// v[i] for the signed indices the lowering counts with (programs, steps, ranks); no bounds check.
template <class V>
decltype(auto) at(V& v, std::integral auto i) {
  return v[static_cast<std::size_t>(i)];
}

using ConnectionKey = std::tuple<int, int, int>;  // channel, from, to

struct SendRecord {  // pass 1 -> 2: one sent slice
  int program = 0;
  std::int32_t position = 0;  // steps the sending program issued before this send
  plan::Range src;
};

struct SentRange {  // pass 2 -> 3: a range a program sent, and the receiver's step that reads it
  std::int32_t position = 0;
  plan::Range src;
  StepRef reader;
  int program = 0;                 // the sending program
  std::vector<StepRef> coveredBy;  // steps of the rank that overwrite it and wait for the reader
};

// Pass 1 -> 3: a step that carries phase-dep waits: the deps of the phase it opens, and what they name
// on the rank's other programs (kStart where that program has no step in the phases named).
struct Gate {
  int program = 0;
  std::int32_t step = 0;
  std::vector<plan::PhaseDep> deps;
  std::vector<StepRef> knows;
};

struct LoweringState {
  LoweringState(const plan::Plan& p, std::int64_t slice, std::span<const BufferAlias> a) : plan(p), sliceElems(slice), aliases(a) {
    out.nranks = p.nranks;
    out.sliceElems = slice;
    out.scratchCount = p.scratchCount;
  }

  const plan::Plan& plan;
  std::int64_t sliceElems;
  std::span<const BufferAlias> aliases;  // one per rank, or empty
  LoweredPlan out;                       // filled pass by pass
  std::map<ConnectionKey, std::vector<SendRecord>> sends;  // pass 1 -> 2, in send order
  std::map<ConnectionKey, std::vector<StepRef>> receives;  // pass 1 -> 2: the receiving steps, in order
  std::vector<std::vector<SentRange>> sent;                // pass 2 -> 3: per sending program
  std::vector<Gate> gates;                                 // pass 1 -> 3: every program's, rank by rank

  [[nodiscard]] BufferAlias aliasOf(int rank) const { return aliases.empty() ? BufferAlias{} : at(aliases, rank); }
  RankProgram& program(int p) { return at(out.programs, p); }
  Step& step(StepRef s) { return at(program(s.program).steps, s.step); }
};

// Keeps one wait per program, the latest step (a program's steps complete in order; kStart < any step).
inline void addWait(std::vector<StepRef>& waits, StepRef w) {
  for (StepRef& x : waits)
    if (x.program == w.program) {
      x.step = std::max(x.step, w.step);
      return;
    }
  waits.push_back(w);
}

// Takes the steps of `programs` round robin, each program as far as ready(a, i) lets it (a: its place
// in `programs`; done[a]: its steps taken), each step once, in program order; false if steps are left
// that none can take (a cycle). Passes 3 and 5 walk their topological orders with it.
template <class Ready, class Take>
bool roundRobin(std::span<const RankProgram> programs, std::vector<std::int32_t>& done, Ready ready, Take take) {
  const int np = static_cast<int>(programs.size());
  std::size_t left = 0;
  for (const RankProgram& prog : programs) left += prog.steps.size();
  done.assign(programs.size(), 0);
  while (left > 0) {
    bool progress = false;
    for (int a = 0; a < np; ++a)
      for (auto& i = at(done, a); i < static_cast<std::int32_t>(at(programs, a).steps.size()) && ready(a, i);
           ++i, --left, progress = true)
        take(a, i);
    if (!progress) return false;
  }
  return true;
}

// Passes 2 to 5, in order; each throws std::logic_error for a plan it cannot lower.
void pairSendsWithReceives(LoweringState& s);
void orderWritesAfterSends(LoweringState& s, int rank);
void markSignalsAndBuffers(LoweringState& s);
void buildIssueOrder(LoweringState& s);

}  // namespace cclab::cuda::lowering
