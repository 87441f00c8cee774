// Plan lowering in five named passes (lowering.h describes the model).
#include "collectives/cuda/lowering.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "collectives/core/errors.h"
#include "collectives/plan/op_dispatch.h"
#include "collectives/plan/slice_walk.h"

namespace cclab::cuda {
namespace {

struct SendRecord {
  int program = 0;
  std::int32_t position = 0;  // steps the sending program issued before this send
  plan::Range src;
};

struct SentRange {  // a range a program sent, and the receiver's step that reads it
  std::int32_t position = 0;
  plan::Range src;
  StepRef reader;
  int program = 0;                // the sending program
  std::vector<StepRef> coveredBy;  // steps of the rank that overwrite it and wait for the reader
};

// A step that carries phase-dep waits (pass 1): the deps of the phase it opens, and what they name on
// the rank's other programs (kStart where that program has no step in the phases named).
struct Gate {
  int program = 0;
  std::int32_t step = 0;
  std::vector<plan::PhaseDep> deps;
  std::vector<StepRef> knows;
};

using ConnectionKey = std::tuple<int, int, int>;  // channel, from, to

plan::Range sliceOf(const plan::Range& r, std::int64_t lo, std::int64_t hi) { return {r.buf, r.offset + lo, hi - lo}; }

// Keeps one wait per program, the latest step (a program's steps complete in order; kStart < any step).
void addWait(std::vector<StepRef>& waits, StepRef w) {
  for (StepRef& x : waits)
    if (x.program == w.program) {
      x.step = std::max(x.step, w.step);
      return;
    }
  waits.push_back(w);
}

// The lowering as five named passes over one state (the header describes the model).
class Lowering {
 public:
  Lowering(const plan::Plan& plan, std::int64_t sliceElems, std::span<const BufferAlias> aliases)
      : plan_(plan), n_(plan.nranks), slice_(sliceElems), aliases_(aliases) {
    if (!aliases.empty() && static_cast<int>(aliases.size()) != n_)
      throw std::logic_error("lowerPlan: need one BufferAlias per rank");
    out_.nranks = n_;
    out_.sliceElems = sliceElems;
    out_.scratchCount = plan.scratchCount;
  }

  LoweredPlan run() {
    for (int r = 0; r < n_; ++r) collectSteps(r);
    out_.firstProgram.push_back(static_cast<int>(out_.programs.size()));
    pairSendsWithReceives();
    for (int r = 0; r < n_; ++r) orderWritesAfterSends(r);
    markSignalsAndBuffers();
    buildIssueOrder();
    return std::move(out_);
  }

 private:
  [[nodiscard]] BufferAlias aliasOf(int r) const {
    return aliases_.empty() ? BufferAlias{} : aliases_[static_cast<std::size_t>(r)];
  }
  RankProgram& program(int p) { return out_.programs[static_cast<std::size_t>(p)]; }

  // A step's threads read and write in parallel: an operand may be its destination exactly (dst =
  // dst (op) x), never shifted against it.
  void checkNoShiftedOverlap(int r, const plan::Range& dst, const plan::Range& operand) const {
    if (overlaps(dst, operand, aliasOf(r)) &&
        !(locate(dst.buf, dst.offset, aliasOf(r)) == locate(operand.buf, operand.offset, aliasOf(r))))
      throw std::logic_error("lowerPlan: rank " + std::to_string(r) + " has a step whose operand overlaps its destination "
                             "at another offset");
  }

  // Pass 1: rank r's programs, one per channel it has ops in (an empty one if none), each with its
  // slices in executor order (plan::SliceCursor over the channel's ops): a step per Copy that is not in
  // place, per received slice, and p per ReduceAll slice; sends are only recorded, with their position.
  // Phase deps (plan.h): the first slice of a phase >= a dep's phase opens a gate. Its waits go on the
  // slice's first step; a send makes no step, so a send (or a slice that lowers to nothing before a
  // send) is preceded by a gate step of its own (count 0, no data), which the send's receivers then
  // wait for as the send's data-ready step. The waits are resolved once all the rank's programs exist.
  void collectSteps(int r) {
    out_.firstProgram.push_back(static_cast<int>(out_.programs.size()));
    std::int32_t eventBase = 0;
    const auto channels = plan::channelOps(plan_, r);
    std::vector<int> programOf(channels.size(), -1);
    const std::size_t firstGate = gates_.size();
    for (int c = 0; c < static_cast<int>(channels.size()); ++c) {
      const std::span<const plan::Op> ops = channels[static_cast<std::size_t>(c)];
      if (ops.empty()) continue;
      const int prog = static_cast<int>(out_.programs.size());
      programOf[static_cast<std::size_t>(c)] = prog;
      out_.programs.push_back({r, c, eventBase, {}, {}, false});
      stepPhase_.emplace_back();
      std::vector<plan::PhaseDep> deps;  // this channel's, by phase
      for (const plan::PhaseDep& d : plan_.deps)
        if (d.channel == c) deps.push_back(d);
      std::stable_sort(deps.begin(), deps.end(), [](const auto& a, const auto& b) { return a.phase < b.phase; });
      std::size_t nextDep = 0;
      std::vector<plan::PhaseDep> pending;  // deps of a phase reached, not yet put on a step
      for (plan::SliceCursor cur(ops, slice_); !cur.done(); cur.advance()) {
        const plan::Op& op = ops[cur.opIndex()];
        const auto [lo, hi] = cur.sliceRange();
        while (nextDep < deps.size() && deps[nextDep].phase <= op.phase) pending.push_back(deps[nextDep++]);
        auto& steps = program(prog).steps;
        const auto before = static_cast<std::int32_t>(steps.size());
        if (!pending.empty() && op.kind == plan::OpKind::Send) {
          Step gate;  // no data: buffers the send reads, so every consumer has a pointer for it
          gate.dst = gate.src = {op.src.buf, op.src.offset + lo, 0};
          gate.srcRank = r;
          steps.push_back(std::move(gate));
        }
        lowerSlice(r, prog, op, lo, hi);
        if (!pending.empty() && static_cast<std::int32_t>(program(prog).steps.size()) > before) {
          gates_.push_back({prog, before, std::move(pending), {}});
          pending.clear();
        }
        stepPhase_.back().resize(program(prog).steps.size(), op.phase);
      }
      eventBase += static_cast<std::int32_t>(program(prog).steps.size());
    }
    if (out_.firstProgram.back() == static_cast<int>(out_.programs.size())) {
      out_.programs.push_back({r, 0, 0, {}, {}, false});
      stepPhase_.emplace_back();
    }
    for (std::size_t g = firstGate; g < gates_.size(); ++g) resolveGate(gates_[g], programOf);
  }

  // A gate waits, per dep, for the last step of channel afterChannel in phases <= afterPhase (none
  // where that channel has no such step: then it only knows the program has started).
  void resolveGate(Gate& gate, const std::vector<int>& programOf) {
    Step& step = program(gate.program).steps[static_cast<std::size_t>(gate.step)];
    for (const plan::PhaseDep& d : gate.deps) {
      if (d.afterChannel < 0 || static_cast<std::size_t>(d.afterChannel) >= programOf.size()) continue;
      const int other = programOf[static_cast<std::size_t>(d.afterChannel)];
      if (other < 0 || other == gate.program) continue;  // no ops, or its own earlier phases (done in order)
      const auto& phases = stepPhase_[static_cast<std::size_t>(other)];
      auto last = static_cast<std::int32_t>(phases.size()) - 1;
      while (last >= 0 && phases[static_cast<std::size_t>(last)] > d.afterPhase) --last;
      const StepRef ref{other, last < 0 ? StepRef::kStart : last};
      addWait(gate.knows, ref);
      if (last >= 0) addWait(step.waits, ref);
    }
  }

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
    Lowering& l;
    int r, prog;
    const plan::Op& op;
    std::int64_t elems;
    std::vector<Step>& steps;
    Ptr at(const plan::Range& x, std::int64_t lo) const { return {r, sliceOf(x, lo, lo + elems)}; }
    static bool writable(Ptr) { return true; }  // write after send: pass 3
    bool send(const plan::Op& o, In src) {
      l.sends_[{o.channel, r, o.peer}].push_back({prog, static_cast<std::int32_t>(steps.size()), src.range});
      return true;
    }
    static bool receive(const plan::Op&, int peer, Ptr, int, In& v) {
      v = {peer, {}};  // from the peer, paired in pass 2
      return true;
    }
    static void release(const plan::Op&, int) {}
    [[nodiscard]] bool same(Ptr dst, In src) const {
      return locate(dst.range.buf, dst.range.offset, l.aliasOf(r)) == locate(src.range.buf, src.range.offset, l.aliasOf(r));
    }
    [[nodiscard]] bool overlaps(Ptr dst, In src) const { return cuda::overlaps(dst.range, src.range, l.aliasOf(r)); }
    void copy(Ptr dst, In src) {
      if (src.rank != r || !same(dst, src)) emit(StepKind::Copy, dst, {}, src);  // nothing in place
    }
    void reduce(Ptr dst, In a, In b) {
      const bool recvReduce = op.kind == plan::OpKind::RecvReduce;
      if (!recvReduce && !(a.rank == r && same(dst, a))) copy(dst, a);
      if (recvReduce) l.checkNoShiftedOverlap(r, dst.range, a.range);
      emit(StepKind::Reduce, dst, recvReduce ? a.range : dst.range, b);
    }
    Ptr accumulator(Ptr dst, In own) {
      if (r == 0) l.checkNoShiftedOverlap(r, dst.range, own.range);
      throw std::logic_error("lowerPlan: rank " + std::to_string(r) +
                             " has a ReduceAll that writes over its own operand before folding it in");
    }
    // A step dst = src or dst = local (op) src, src on this rank or received (pass 2 pairs it).
    void emit(StepKind kind, Ptr dst, const plan::Range& local, In src) {
      if (src.rank == r) l.checkNoShiftedOverlap(r, dst.range, src.range);
      if (src.rank != r) l.receives_[{op.channel, src.rank, r}].push_back({prog, static_cast<std::int32_t>(steps.size())});
      steps.push_back({kind, dst.range, local, src.rank, src.rank == r ? src.range : plan::Range{}, {}, false});
    }
  };

  void lowerSlice(int r, int prog, const plan::Op& op, std::int64_t lo, std::int64_t hi) {
    const bool pointToPoint = op.kind == plan::OpKind::Send || op.kind == plan::OpKind::Recv || op.kind == plan::OpKind::RecvReduce;
    if (pointToPoint && op.peer == r) throw std::logic_error("lowerPlan: rank " + std::to_string(r) + " sends to itself");
    SliceSteps slice{*this, r, prog, op, hi - lo, program(prog).steps};
    plan::dispatchSlice(slice, op, r, n_, lo, values_);
  }

  // Pass 2: the k-th send on a connection (channel, from, to) pairs with the k-th receive (FIFO); the
  // receiving step reads the sent range and waits for the sending program's preceding step (data ready).
  void pairSendsWithReceives() {
    sent_.resize(out_.programs.size());
    for (const auto& [key, list] : sends_) {
      const auto [channel, from, to] = key;
      auto it = receives_.find(key);
      const std::size_t got = it == receives_.end() ? 0 : it->second.size();
      if (got != list.size())
        throw std::logic_error("lowerPlan: rank " + std::to_string(from) + " sends " + std::to_string(list.size()) +
                               " slices to rank " + std::to_string(to) + " on channel " + std::to_string(channel) +
                               ", which receives " + std::to_string(got));
      for (std::size_t k = 0; k < list.size(); ++k) {
        const SendRecord& snd = list[k];
        const auto [prog, idx] = it->second[k];
        Step& step = program(prog).steps[static_cast<std::size_t>(idx)];
        if (step.count() != snd.src.count)
          throw std::logic_error("lowerPlan: rank " + std::to_string(to) + " expects " + std::to_string(step.count()) +
                                 " elements, rank " + std::to_string(from) + " sends " + std::to_string(snd.src.count));
        step.src = snd.src;
        addWait(step.waits, {snd.program, snd.position - 1});
        sent_[static_cast<std::size_t>(snd.program)].push_back({snd.position, snd.src, {prog, idx}, snd.program, {}});
      }
    }
    for (const auto& [key, list] : receives_)
      if (!sends_.contains(key))
        throw std::logic_error("lowerPlan: rank " + std::to_string(std::get<2>(key)) + " receives " +
                               std::to_string(list.size()) + " slices from rank " + std::to_string(std::get<1>(key)) +
                               ", which sends none");
  }

  // Pass 3: write after send, per rank. A step that overwrites a range the rank sent earlier waits for
  // its reader; sends still unread at the end become the sending program's final waits. Without
  // deps a rank's channels never touch the same elements (plan.h), so a step need only look at its
  // own program's sends. With deps a step also looks at the sends of the rank's other programs that
  // come before it in dep order: its vector clock over the rank's programs (program order and the
  // gates' waits, transitively) has passed the step before the send. A send is covered once some
  // step known to have finished before waits for its reader.
  void orderWritesAfterSends(int r) {
    const int first = out_.firstProgram[static_cast<std::size_t>(r)];
    const int np = out_.firstProgram[static_cast<std::size_t>(r) + 1] - first;
    const bool crossPrograms = !plan_.deps.empty() && np > 1;
    std::vector<SentRange> sends;  // the rank's, program by program, by position
    std::vector<std::size_t> sendBegin(static_cast<std::size_t>(np) + 1, 0);
    for (int a = 0; a < np; ++a) {
      auto& own = sent_[static_cast<std::size_t>(first + a)];
      std::stable_sort(own.begin(), own.end(), [](const SentRange& x, const SentRange& y) { return x.position < y.position; });
      sends.insert(sends.end(), own.begin(), own.end());
      sendBegin[static_cast<std::size_t>(a) + 1] = sends.size();
    }
    // clocks[a][i][b]: the latest step of program b known finished before step i of program a starts
    // (kStart: every program of the rank has started when any step runs).
    using Clock = std::vector<std::int32_t>;
    std::vector<std::vector<Clock>> clocks(static_cast<std::size_t>(np));
    std::vector<std::vector<const Gate*>> gateAt(static_cast<std::size_t>(np));
    for (int a = 0; a < np; ++a) {
      clocks[static_cast<std::size_t>(a)].resize(program(first + a).steps.size());
      gateAt[static_cast<std::size_t>(a)].assign(program(first + a).steps.size(), nullptr);
    }
    for (const Gate& g : gates_)
      if (g.program >= first && g.program < first + np)
        gateAt[static_cast<std::size_t>(g.program - first)][static_cast<std::size_t>(g.step)] = &g;
    std::vector<std::vector<std::size_t>> active(static_cast<std::size_t>(np));  // per program: sends it may overwrite
    std::vector<std::vector<std::size_t>> nextSend(static_cast<std::size_t>(np), std::vector<std::size_t>(static_cast<std::size_t>(np)));
    for (int a = 0; a < np; ++a)
      for (int b = 0; b < np; ++b) nextSend[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = sendBegin[static_cast<std::size_t>(b)];
    // Steps of the rank's programs in a topological order of program order and gate waits.
    std::vector<std::int32_t> done;
    const auto gateOpen = [&](int a, std::int32_t i) {
      const Gate* gate = gateAt[static_cast<std::size_t>(a)][static_cast<std::size_t>(i)];
      return !gate || std::all_of(gate->knows.begin(), gate->knows.end(), [&](const StepRef& w) {
        return w.step < done[static_cast<std::size_t>(w.program - first)];
      });
    };
    const bool ordered = roundRobin(first, np, done, gateOpen, [&](int a, std::int32_t i) {
      const Gate* gate = gateAt[static_cast<std::size_t>(a)][static_cast<std::size_t>(i)];
      Clock clock = i == 0 ? Clock(static_cast<std::size_t>(np), StepRef::kStart) : clocks[static_cast<std::size_t>(a)][static_cast<std::size_t>(i) - 1];
      clock[static_cast<std::size_t>(a)] = i - 1;
      if (gate)
        for (const StepRef& w : gate->knows) {
          if (w.step == StepRef::kStart) continue;
          const auto b = static_cast<std::size_t>(w.program - first);
          const Clock& theirs = clocks[b][static_cast<std::size_t>(w.step)];
          for (std::size_t x = 0; x < clock.size(); ++x) clock[x] = std::max(clock[x], theirs[x]);
          clock[b] = std::max(clock[b], w.step);
        }
      // Sends now known to precede this step (the send at position k follows step k-1).
      for (int b = 0; b < np; ++b) {
        if (b != a && !crossPrograms) continue;
        auto& next = nextSend[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
        while (next < sendBegin[static_cast<std::size_t>(b) + 1] && sends[next].position - 1 <= clock[static_cast<std::size_t>(b)])
          active[static_cast<std::size_t>(a)].push_back(next++);
      }
      Step& step = program(first + a).steps[static_cast<std::size_t>(i)];
      std::erase_if(active[static_cast<std::size_t>(a)], [&](std::size_t s) {
        SentRange& sent = sends[s];
        if (!overlaps(sent.src, step.dst, aliasOf(r))) return false;
        const bool covered = std::any_of(sent.coveredBy.begin(), sent.coveredBy.end(), [&](const StepRef& c) {
          return clock[static_cast<std::size_t>(c.program - first)] >= c.step;
        });
        if (!covered) {
          addWait(step.waits, sent.reader);
          sent.coveredBy.push_back({first + a, i});
        }
        return true;
      });
      clocks[static_cast<std::size_t>(a)][static_cast<std::size_t>(i)] = std::move(clock);
    });
    if (!ordered)
      throw std::logic_error("lowerPlan: the phase deps of rank " + std::to_string(r) + " wait for each other in a cycle");
    for (const SentRange& s : sends)
      if (s.coveredBy.empty()) addWait(program(s.program).finalWaits, s.reader);
  }

  // Pass 4: which steps and starts are waited for, the buffers each rank's memory is used through,
  // and the largest step.
  void markSignalsAndBuffers() {
    auto mark = [&](const StepRef& w) {
      auto& prog = program(w.program);
      if (w.step == StepRef::kStart)
        prog.startSignals = true;
      else
        prog.steps[static_cast<std::size_t>(w.step)].signals = true;
    };
    out_.usedBuffers.assign(static_cast<std::size_t>(n_), 0);
    auto use = [&](int rank, const plan::Range& r) {
      if (r.count <= 0) return;
      out_.usedBuffers[static_cast<std::size_t>(rank)] |= static_cast<std::uint8_t>(1U << static_cast<unsigned>(r.buf));
    };
    for (const auto& prog : out_.programs)
      for (const Step& s : prog.steps) {
        use(prog.rank, s.dst);
        use(s.srcRank, s.src);
        if (s.kind == StepKind::Reduce) use(prog.rank, s.local);
      }
    for (const auto& prog : out_.programs) {
      for (const Step& s : prog.steps) {
        for (const StepRef& w : s.waits) mark(w);
        out_.maxStepElems = std::max(out_.maxStepElems, s.count());
      }
      for (const StepRef& w : prog.finalWaits) mark(w);
    }
  }

  // Pass 5: a topological order, programs taken round-robin as far as each can go; none left that can
  // go means a cycle.
  void buildIssueOrder() {
    std::vector<std::int32_t> issued;
    const auto ready = [&](int p, std::int32_t i) {
      const auto& waits = program(p).steps[static_cast<std::size_t>(i)].waits;
      return std::all_of(waits.begin(), waits.end(), [&](const StepRef& w) { return w.step < issued[static_cast<std::size_t>(w.program)]; });
    };
    if (!roundRobin(0, static_cast<int>(out_.programs.size()), issued, ready, [&](int p, std::int32_t i) { out_.issueOrder.push_back({p, i}); }))
      throw std::logic_error("lowerPlan: the steps of plan " + std::string(plan::name(plan_.collective)) + "/" +
                             std::string(plan::name(plan_.algorithm)) + " wait for each other in a cycle");
  }

  // Takes the steps of programs [first, first + np) round robin, each program as far as ready(a, i)
  // lets it (a: its place from first; done[a]: its steps taken), each step once, in program order;
  // false if steps are left that none can take (a cycle).
  template <class Ready, class Take>
  bool roundRobin(int first, int np, std::vector<std::int32_t>& done, Ready ready, Take take) {
    std::size_t left = 0;
    for (int a = 0; a < np; ++a) left += program(first + a).steps.size();
    done.assign(static_cast<std::size_t>(np), 0);
    while (left > 0) {
      bool progress = false;
      for (int a = 0; a < np; ++a)
        for (auto& i = done[static_cast<std::size_t>(a)];
             i < static_cast<std::int32_t>(program(first + a).steps.size()) && ready(a, i); ++i, --left, progress = true)
          take(a, i);
      if (!progress) return false;
    }
    return true;
  }

  const plan::Plan& plan_;
  int n_;
  std::int64_t slice_;
  std::span<const BufferAlias> aliases_;
  LoweredPlan out_;
  std::map<ConnectionKey, std::vector<SendRecord>> sends_;
  std::map<ConnectionKey, std::vector<std::pair<int, std::int32_t>>> receives_;  // -> (program, step)
  std::vector<std::vector<SentRange>> sent_;                                     // per sending program
  std::vector<std::vector<int>> stepPhase_;                                      // per program: each step's phase
  std::vector<Gate> gates_;                                                      // every program's, rank by rank
  std::vector<SliceSteps::In> values_;                                           // ReduceAll's operands
};

}  // namespace

std::size_t LoweredPlan::stepsOfRank(int rank) const {
  std::size_t n = 0;
  for (const RankProgram& prog : programsOf(rank)) n += prog.steps.size();
  return n;
}

LoweredPlan lowerPlan(const plan::Plan& plan, std::int64_t sliceElems, std::span<const BufferAlias> aliases) {
  return Lowering(plan, sliceElems, aliases).run();
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
