// Plan lowering in five named passes (lowering.h describes the model).
#include "collectives/cuda/lowering.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "collectives/core/errors.h"
#include "collectives/plan/slice_walk.h"

namespace cclab::cuda {
namespace {

struct SendRecord {
  int sender = 0;
  std::int32_t position = 0;  // steps the sender issued before this send
  plan::Range src;
};

struct SentRange {  // a range a rank sent, and the receiver's step that reads it
  std::int32_t position = 0;
  plan::Range src;
  StepRef reader;
};

plan::Range sliceOf(const plan::Range& r, std::int64_t lo, std::int64_t hi) { return {r.buf, r.offset + lo, hi - lo}; }

// Keeps one wait per rank, the latest step (a rank's steps complete in order).
void addWait(std::vector<StepRef>& waits, StepRef w) {
  for (StepRef& x : waits)
    if (x.rank == w.rank) {
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
    out_.ranks.resize(static_cast<std::size_t>(n_));
  }

  LoweredPlan run() {
    for (int r = 0; r < n_; ++r) collectSteps(r);
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
  RankProgram& program(int r) { return out_.ranks[static_cast<std::size_t>(r)]; }

  // A step's threads read and write in parallel: an operand may be its destination exactly (dst =
  // dst (op) x), never shifted against it.
  void checkNoShiftedOverlap(int r, const plan::Range& dst, const plan::Range& operand) const {
    if (overlaps(dst, operand, aliasOf(r)) &&
        !(locate(dst.buf, dst.offset, aliasOf(r)) == locate(operand.buf, operand.offset, aliasOf(r))))
      throw std::logic_error("lowerPlan: rank " + std::to_string(r) + " has a step whose operand overlaps its destination "
                             "at another offset");
  }

  // Pass 1: rank r's slices in executor order (plan::SliceCursor): a step per Copy that is not in
  // place and per received slice; sends are only recorded, with the sender's position.
  void collectSteps(int r) {
    auto& steps = program(r).steps;
    const auto& ops = plan_.ranks[static_cast<std::size_t>(r)];
    for (plan::SliceCursor cur(ops, slice_); !cur.done(); cur.advance()) {
      const plan::Op& op = ops[cur.opIndex()];
      const auto [lo, hi] = cur.sliceRange();
      if ((op.kind != plan::OpKind::Copy) && op.peer == r)
        throw std::logic_error("lowerPlan: rank " + std::to_string(r) + " sends to itself");
      switch (op.kind) {
        case plan::OpKind::ReduceAll:
          throw InvalidArgument("lowerPlan: the CUDA lowering cannot run ReduceAll (oneshot, twoshot) yet");
        case plan::OpKind::Send:
          sends_[{r, op.peer}].push_back({r, static_cast<std::int32_t>(steps.size()), sliceOf(op.src, lo, hi)});
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
          s.srcRank = op.peer;
          receives_[{op.peer, r}].push_back(static_cast<std::int32_t>(steps.size()));
          steps.push_back(std::move(s));
          break;
        }
      }
    }
  }

  // Pass 2: the k-th send on a channel pairs with the k-th receive (FIFO); the receiving step reads
  // the sent range and waits for the sender's preceding step (data ready).
  void pairSendsWithReceives() {
    sent_.resize(static_cast<std::size_t>(n_));
    for (const auto& [key, list] : sends_) {
      auto it = receives_.find(key);
      const std::size_t got = it == receives_.end() ? 0 : it->second.size();
      if (got != list.size())
        throw std::logic_error("lowerPlan: rank " + std::to_string(key.first) + " sends " + std::to_string(list.size()) +
                               " slices to rank " + std::to_string(key.second) + ", which receives " + std::to_string(got));
      for (std::size_t k = 0; k < list.size(); ++k) {
        const SendRecord& snd = list[k];
        const std::int32_t idx = it->second[k];
        Step& step = program(key.second).steps[static_cast<std::size_t>(idx)];
        if (step.count() != snd.src.count)
          throw std::logic_error("lowerPlan: rank " + std::to_string(key.second) + " expects " +
                                 std::to_string(step.count()) + " elements, rank " + std::to_string(key.first) +
                                 " sends " + std::to_string(snd.src.count));
        step.src = snd.src;
        addWait(step.waits, {snd.sender, snd.position - 1});
        sent_[static_cast<std::size_t>(snd.sender)].push_back({snd.position, snd.src, {key.second, idx}});
      }
    }
    for (const auto& [key, list] : receives_)
      if (!sends_.contains(key))
        throw std::logic_error("lowerPlan: rank " + std::to_string(key.second) + " receives " + std::to_string(list.size()) +
                               " slices from rank " + std::to_string(key.first) + ", which sends none");
  }

  // Pass 3: write after send. A step of rank r that overwrites a range r sent waits for its reader;
  // sends still unread at the end become r's final waits.
  void orderWritesAfterSends(int r) {
    auto& prog = program(r);
    auto& pending = sent_[static_cast<std::size_t>(r)];
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
      auto& prog = program(w.rank);
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
    for (int r = 0; r < n_; ++r)
      for (const Step& s : program(r).steps) {
        use(r, s.dst);
        use(s.srcRank, s.src);
        if (s.kind == StepKind::Reduce) use(r, s.local);
      }
    for (const auto& prog : out_.ranks) {
      for (const Step& s : prog.steps) {
        for (const StepRef& w : s.waits) mark(w);
        out_.maxStepElems = std::max(out_.maxStepElems, s.count());
      }
      for (const StepRef& w : prog.finalWaits) mark(w);
    }
  }

  // Pass 5: a topological order, ranks taken round-robin as far as each can go; none left that can
  // go means a cycle.
  void buildIssueOrder() {
    std::vector<std::int32_t> issued(static_cast<std::size_t>(n_), 0);
    std::size_t total = 0;
    for (const auto& prog : out_.ranks) total += prog.steps.size();
    out_.issueOrder.reserve(total);
    while (out_.issueOrder.size() < total) {
      bool progress = false;
      for (int r = 0; r < n_; ++r) {
        const auto& steps = program(r).steps;
        auto& i = issued[static_cast<std::size_t>(r)];
        while (i < static_cast<std::int32_t>(steps.size())) {
          const auto& waits = steps[static_cast<std::size_t>(i)].waits;
          const bool ready = std::all_of(waits.begin(), waits.end(),
                                         [&](const StepRef& w) { return w.step < issued[static_cast<std::size_t>(w.rank)]; });
          if (!ready) break;
          out_.issueOrder.push_back({r, i++});
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
  std::map<std::pair<int, int>, std::vector<SendRecord>> sends_;        // (from, to)
  std::map<std::pair<int, int>, std::vector<std::int32_t>> receives_;  // (from, to) -> receiver's steps
  std::vector<std::vector<SentRange>> sent_;                           // per sender
};

}  // namespace

LoweredPlan lowerPlan(const plan::Plan& plan, std::int64_t sliceElems, std::span<const BufferAlias> aliases) {
  return Lowering(plan, sliceElems, aliases).run();
}

Traffic traffic(const LoweredPlan& lowered) {
  Traffic t;
  for (const RankProgram& prog : lowered.ranks)
    for (const Step& s : prog.steps) {
      t.readElems += s.count() * (s.kind == StepKind::Reduce ? 2 : 1);
      t.writtenElems += s.count();
    }
  return t;
}

}  // namespace cclab::cuda
