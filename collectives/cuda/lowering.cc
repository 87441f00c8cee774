// Plan lowering: the driver and its op dispatch, pass 1 (lowering.h describes the model,
// lowering_state.h the five passes). Pass 1 walks each rank's channels and sends every slice through
// the op rules every executor runs (plan/op_dispatch.h), with a consumer that compiles rather than
// runs: a move becomes a step of the rank's program for that channel, a send or a receive a record
// on its connection for pass 2 to pair, and a phase dep a gate for pass 3. Passes 2 to 5 only order
// the steps made here (lowering_pairing.cc, lowering_write_order.cc, lowering_issue_order.cc).
#include "collectives/cuda/lowering.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "collectives/cuda/lowering_state.h"
#include "collectives/plan/op_dispatch.h"
#include "collectives/plan/slice_walk.h"

namespace cclab::cuda {
namespace lowering {
namespace {

plan::Range sliceOf(const plan::Range& r, std::int64_t lo, std::int64_t hi) { return {r.buf, r.offset + lo, hi - lo}; }

// The lowering's consumer of one slice (plan/op_dispatch.h: the op rules every executor runs): an
// operand is a range on a rank, a received one a range of the peer that pass 2 pairs with its send.
// Moves become steps; a step reads at most one other rank, so ReduceAll's first fold step, v_0 (op)
// v_1, is a copy of v_0 and a reduce of v_1, and an accumulator is refused.
struct Operand {
  int rank = -1;
  plan::Range range;
  bool operator==(const Operand&) const = default;
};
struct SliceSteps {
  using Ptr = Operand;
  using In = Operand;
  LoweringState& s;
  int r, prog;
  const plan::Op& op;
  std::int64_t elems;
  std::vector<Step>& steps;
  Ptr at(const plan::Range& x, std::int64_t lo) const { return {r, sliceOf(x, lo, lo + elems)}; }
  static bool writable(Ptr) { return true; }  // write after send: pass 3
  bool send(const plan::Op& o, In src) {
    s.sends[{o.channel, r, o.peer}].push_back({prog, static_cast<std::int32_t>(steps.size()), src.range});
    return true;
  }
  static bool receive(const plan::Op&, int peer, Ptr, int, In& v) {
    v = {peer, {}};  // from the peer, paired in pass 2
    return true;
  }
  static void release(const plan::Op&, int) {}
  [[nodiscard]] bool same(Ptr dst, In src) const {
    return locate(dst.range.buf, dst.range.offset, s.aliasOf(r)) == locate(src.range.buf, src.range.offset, s.aliasOf(r));
  }
  [[nodiscard]] bool overlaps(Ptr dst, In src) const { return cuda::overlaps(dst.range, src.range, s.aliasOf(r)); }
  void copy(Ptr dst, In src) {
    if (src.rank != r || !same(dst, src)) emit(StepKind::Copy, dst, {}, src);  // nothing in place
  }
  void reduce(Ptr dst, In a, In b) {
    const bool recvReduce = op.kind == plan::OpKind::RecvReduce;
    if (!recvReduce && !(a.rank == r && same(dst, a))) copy(dst, a);
    if (recvReduce) checkNoShiftedOverlap(dst, a);
    emit(StepKind::Reduce, dst, recvReduce ? a.range : dst.range, b);
  }
  Ptr accumulator(Ptr dst, In own) {
    if (r == 0) checkNoShiftedOverlap(dst, own);
    throw std::logic_error("lowerPlan: rank " + std::to_string(r) +
                           " has a ReduceAll that writes over its own operand before folding it in");
  }
  // A step dst = src or dst = local (op) src, src on this rank or received (pass 2 pairs it).
  void emit(StepKind kind, Ptr dst, const plan::Range& local, In src) {
    if (src.rank == r) checkNoShiftedOverlap(dst, src);
    if (src.rank != r) s.receives[{op.channel, src.rank, r}].push_back({prog, static_cast<std::int32_t>(steps.size())});
    steps.push_back({kind, dst.range, local, src.rank, src.rank == r ? src.range : plan::Range{}, {}, false});
  }
  // A step's threads read and write in parallel: an operand on this rank may be its destination
  // exactly (dst = dst (op) x), never shifted against it.
  void checkNoShiftedOverlap(Ptr dst, In operand) const {
    if (overlaps(dst, operand) && !same(dst, operand))
      throw std::logic_error("lowerPlan: rank " + std::to_string(r) + " has a step whose operand overlaps its destination "
                             "at another offset");
  }
};

// Pass 1's record of one rank's channels, by channel: its program (-1: the channel has no ops) and
// the phase of each step of it, which the rank's gates are resolved against.
struct RankChannels {
  std::vector<int> programOf;
  std::vector<std::vector<int>> stepPhase;
};

// A gate waits, per dep, for the last step of channel afterChannel in phases <= afterPhase (none
// where that channel has no such step: then it only knows the program has started).
void resolveGate(LoweringState& s, Gate& gate, const RankChannels& rank) {
  Step& step = s.step({gate.program, gate.step});
  for (const plan::PhaseDep& d : gate.deps) {
    if (d.afterChannel < 0 || static_cast<std::size_t>(d.afterChannel) >= rank.programOf.size()) continue;
    const int other = at(rank.programOf, d.afterChannel);
    if (other < 0 || other == gate.program) continue;  // no ops, or its own earlier phases (done in order)
    const std::vector<int>& phases = at(rank.stepPhase, d.afterChannel);
    auto last = static_cast<std::int32_t>(phases.size()) - 1;
    while (last >= 0 && at(phases, last) > d.afterPhase) --last;
    const StepRef ref{other, last < 0 ? StepRef::kStart : last};
    addWait(gate.knows, ref);
    if (last >= 0) addWait(step.waits, ref);
  }
}

// Pass 1 for rank r: its programs, one per channel it has ops in (an empty one if none), each with its
// slices in executor order (plan::SliceCursor over the channel's ops): a step per Copy that is not in
// place, per received slice, and p per ReduceAll slice; sends are only recorded, with their position.
// Phase deps (plan.h): the first slice of a phase >= a dep's phase opens a gate. Its waits go on the
// slice's first step; a send makes no step, so a send (or a slice that lowers to nothing before a
// send) is preceded by a gate step of its own (count 0, no data), which the send's receivers then
// wait for as the send's data-ready step. The waits are resolved once all the rank's programs exist.
void collectSteps(LoweringState& s, int r) {
  s.out.firstProgram.push_back(static_cast<int>(s.out.programs.size()));
  const auto channels = plan::channelOps(s.plan, r);
  RankChannels rank{std::vector<int>(channels.size(), -1), std::vector<std::vector<int>>(channels.size())};
  std::vector<Operand> values;  // ReduceAll's operands
  std::int32_t eventBase = 0;
  const std::size_t firstGate = s.gates.size();
  for (int c = 0; c < static_cast<int>(channels.size()); ++c) {
    const std::span<const plan::Op> ops = at(channels, c);
    if (ops.empty()) continue;
    const int prog = static_cast<int>(s.out.programs.size());
    at(rank.programOf, c) = prog;
    s.out.programs.push_back({r, c, eventBase, {}, {}, false});
    std::vector<Step>& steps = s.program(prog).steps;
    std::vector<plan::PhaseDep> deps;  // this channel's, by phase
    for (const plan::PhaseDep& d : s.plan.deps)
      if (d.channel == c) deps.push_back(d);
    std::stable_sort(deps.begin(), deps.end(), [](const auto& a, const auto& b) { return a.phase < b.phase; });
    std::size_t nextDep = 0;
    std::vector<plan::PhaseDep> pending;  // deps of a phase reached, not yet put on a step
    for (plan::SliceCursor cur(ops, s.sliceElems); !cur.done(); cur.advance()) {
      const plan::Op& op = ops[cur.opIndex()];
      const auto [lo, hi] = cur.sliceRange();
      while (nextDep < deps.size() && deps[nextDep].phase <= op.phase) pending.push_back(deps[nextDep++]);
      const auto before = static_cast<std::int32_t>(steps.size());
      if (!pending.empty() && op.kind == plan::OpKind::Send) {
        Step gate;  // no data: buffers the send reads, so every consumer has a pointer for it
        gate.dst = gate.src = {op.src.buf, op.src.offset + lo, 0};
        gate.srcRank = r;
        steps.push_back(std::move(gate));
      }
      const bool pointToPoint = op.kind == plan::OpKind::Send || op.kind == plan::OpKind::Recv || op.kind == plan::OpKind::RecvReduce;
      if (pointToPoint && op.peer == r) throw std::logic_error("lowerPlan: rank " + std::to_string(r) + " sends to itself");
      SliceSteps slice{s, r, prog, op, hi - lo, steps};
      plan::dispatchSlice(slice, op, r, s.plan.nranks, lo, values);
      if (!pending.empty() && static_cast<std::int32_t>(steps.size()) > before) {
        s.gates.push_back({prog, before, std::move(pending), {}});
        pending.clear();
      }
      at(rank.stepPhase, c).resize(steps.size(), op.phase);
    }
    eventBase += static_cast<std::int32_t>(steps.size());
  }
  if (s.out.firstProgram.back() == static_cast<int>(s.out.programs.size())) s.out.programs.push_back({r, 0, 0, {}, {}, false});
  for (std::size_t g = firstGate; g < s.gates.size(); ++g) resolveGate(s, s.gates[g], rank);
}

}  // namespace
}  // namespace lowering

LoweredPlan lowerPlan(const plan::Plan& plan, std::int64_t sliceElems, std::span<const BufferAlias> aliases) {
  if (!aliases.empty() && static_cast<int>(aliases.size()) != plan.nranks)
    throw std::logic_error("lowerPlan: need one BufferAlias per rank");
  lowering::LoweringState s(plan, sliceElems, aliases);
  for (int r = 0; r < plan.nranks; ++r) lowering::collectSteps(s, r);
  s.out.firstProgram.push_back(static_cast<int>(s.out.programs.size()));
  lowering::pairSendsWithReceives(s);
  for (int r = 0; r < plan.nranks; ++r) lowering::orderWritesAfterSends(s, r);
  lowering::markSignalsAndBuffers(s);
  lowering::buildIssueOrder(s);
  return std::move(s.out);
}

std::size_t LoweredPlan::stepsOfRank(int rank) const {
  std::size_t n = 0;
  for (const RankProgram& prog : programsOf(rank)) n += prog.steps.size();
  return n;
}

Traffic traffic(const LoweredPlan& lowered) {
  Traffic t;
  for (const RankProgram& prog : lowered.programs)
    for (const Step& s : prog.steps) {
      t.readElems += s.count() * (s.kind == StepKind::Reduce ? 2 : 1);
      t.writtenElems += s.count();
    }
  return t;
}

}  // namespace cclab::cuda
