// Plan lowering in five named passes (lowering.h describes the model).
#include "collectives/cuda/lowering.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "collectives/core/errors.h"
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
    for (int p = 0; p < static_cast<int>(out_.programs.size()); ++p) orderWritesAfterSends(p);
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
  void collectSteps(int r) {
    out_.firstProgram.push_back(static_cast<int>(out_.programs.size()));
    std::int32_t eventBase = 0;
    const auto channels = plan::channelOps(plan_, r);
    for (int c = 0; c < static_cast<int>(channels.size()); ++c) {
      const std::span<const plan::Op> ops = channels[static_cast<std::size_t>(c)];
      if (ops.empty()) continue;
      const int prog = static_cast<int>(out_.programs.size());
      out_.programs.push_back({r, c, eventBase, {}, {}, false});
      for (plan::SliceCursor cur(ops, slice_); !cur.done(); cur.advance()) {
        const plan::Op& op = ops[cur.opIndex()];
        const auto [lo, hi] = cur.sliceRange();
        lowerSlice(r, prog, op, lo, hi);
      }
      eventBase += static_cast<std::int32_t>(program(prog).steps.size());
    }
    if (out_.firstProgram.back() == static_cast<int>(out_.programs.size())) out_.programs.push_back({r, 0, 0, {}, {}, false});
  }

  void lowerSlice(int r, int prog, const plan::Op& op, std::int64_t lo, std::int64_t hi) {
    auto& steps = program(prog).steps;
    const bool pointToPoint = op.kind == plan::OpKind::Send || op.kind == plan::OpKind::Recv || op.kind == plan::OpKind::RecvReduce;
    if (pointToPoint && op.peer == r) throw std::logic_error("lowerPlan: rank " + std::to_string(r) + " sends to itself");
    auto receive = [&](int from, Step s) {
      s.srcRank = from;
      receives_[{op.channel, from, r}].push_back({prog, static_cast<std::int32_t>(steps.size())});
      steps.push_back(std::move(s));
    };
    switch (op.kind) {
      case plan::OpKind::Send:
        sends_[{op.channel, r, op.peer}].push_back({prog, static_cast<std::int32_t>(steps.size()), sliceOf(op.src, lo, hi)});
        break;
      case plan::OpKind::Copy: {
        const plan::Range src = sliceOf(op.src, lo, hi), dst = sliceOf(op.dst, lo, hi);
        if (locate(src.buf, src.offset, aliasOf(r)) == locate(dst.buf, dst.offset, aliasOf(r))) break;  // in place
        checkNoShiftedOverlap(r, dst, src);
        Step s;
        s.kind = StepKind::Copy;
        s.dst = dst;
        s.srcRank = r;
        s.src = src;
        steps.push_back(std::move(s));
        break;
      }
      case plan::OpKind::Recv:
      case plan::OpKind::RecvReduce: {
        Step s;
        s.kind = op.kind == plan::OpKind::Recv ? StepKind::Copy : StepKind::Reduce;
        s.dst = sliceOf(op.dst, lo, hi);
        if (s.kind == StepKind::Reduce) {
          s.local = sliceOf(op.src, lo, hi);
          checkNoShiftedOverlap(r, s.dst, s.local);
        }
        receive(op.peer, std::move(s));
        break;
      }
      case plan::OpKind::ReduceAll: {
        // dst = v_0, then dst = dst (op) v_q for q = 1..p-1; v_r is this rank's own src.
        const plan::Range dst = sliceOf(op.dst, lo, hi), own = sliceOf(op.src, lo, hi);
        const bool ownIsDst = locate(own.buf, own.offset, aliasOf(r)) == locate(dst.buf, dst.offset, aliasOf(r));
        if (r != 0 && overlaps(dst, own, aliasOf(r)))
          throw std::logic_error("lowerPlan: rank " + std::to_string(r) +
                                 " has a ReduceAll that writes over its own operand before folding it in");
        for (int q = 0; q < n_; ++q) {
          Step s;
          s.kind = q == 0 ? StepKind::Copy : StepKind::Reduce;
          s.dst = dst;
          if (q > 0) s.local = dst;
          if (q != r) {
            receive(q, std::move(s));
            continue;
          }
          if (q == 0 && ownIsDst) continue;  // rank 0's own value is already in place
          checkNoShiftedOverlap(r, dst, own);
          s.srcRank = r;
          s.src = own;
          steps.push_back(std::move(s));
        }
        break;
      }
    }
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
        sent_[static_cast<std::size_t>(snd.program)].push_back({snd.position, snd.src, {prog, idx}});
      }
    }
    for (const auto& [key, list] : receives_)
      if (!sends_.contains(key))
        throw std::logic_error("lowerPlan: rank " + std::to_string(std::get<2>(key)) + " receives " +
                               std::to_string(list.size()) + " slices from rank " + std::to_string(std::get<1>(key)) +
                               ", which sends none");
  }

  // Pass 3: write after send. A step of program p that overwrites a range p sent waits for its reader;
  // sends still unread at the end become p's final waits. (Channels never touch the same elements,
  // plan.h, so a program need only look at its own sends.)
  void orderWritesAfterSends(int p) {
    auto& prog = program(p);
    const int r = prog.rank;
    auto& pending = sent_[static_cast<std::size_t>(p)];
    std::stable_sort(pending.begin(), pending.end(),
                     [](const SentRange& a, const SentRange& b) { return a.position < b.position; });
    std::vector<SentRange> active;
    std::size_t next = 0;
    for (std::size_t i = 0; i < prog.steps.size(); ++i) {
      while (next < pending.size() && pending[next].position <= static_cast<std::int32_t>(i)) active.push_back(pending[next++]);
      Step& step = prog.steps[i];
      std::erase_if(active, [&](const SentRange& s) {
        if (!overlaps(s.src, step.dst, aliasOf(r))) return false;
        addWait(step.waits, s.reader);
        return true;
      });
    }
    while (next < pending.size()) active.push_back(pending[next++]);
    for (const SentRange& s : active) addWait(prog.finalWaits, s.reader);
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
    const int np = static_cast<int>(out_.programs.size());
    std::vector<std::int32_t> issued(static_cast<std::size_t>(np), 0);
    std::size_t total = 0;
    for (const auto& prog : out_.programs) total += prog.steps.size();
    out_.issueOrder.reserve(total);
    while (out_.issueOrder.size() < total) {
      bool progress = false;
      for (int p = 0; p < np; ++p) {
        const auto& steps = program(p).steps;
        auto& i = issued[static_cast<std::size_t>(p)];
        while (i < static_cast<std::int32_t>(steps.size())) {
          const auto& waits = steps[static_cast<std::size_t>(i)].waits;
          const bool ready = std::all_of(waits.begin(), waits.end(), [&](const StepRef& w) {
            return w.step < issued[static_cast<std::size_t>(w.program)];
          });
          if (!ready) break;
          out_.issueOrder.push_back({p, i++});
          progress = true;
        }
      }
      if (!progress)
        throw std::logic_error("lowerPlan: the steps of plan " + std::string(plan::name(plan_.collective)) + "/" +
                               std::string(plan::name(plan_.algorithm)) + " wait for each other in a cycle");
    }
  }

  const plan::Plan& plan_;
  int n_;
  std::int64_t slice_;
  std::span<const BufferAlias> aliases_;
  LoweredPlan out_;
  std::map<ConnectionKey, std::vector<SendRecord>> sends_;
  std::map<ConnectionKey, std::vector<std::pair<int, std::int32_t>>> receives_;  // -> (program, step)
  std::vector<std::vector<SentRange>> sent_;                                     // per sending program
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
