#include "collectives/cuda/lowering.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "collectives/plan/interpret.h"

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

}  // namespace

LoweredPlan lowerPlan(const plan::Plan& plan, std::int64_t sliceElems, std::span<const BufferAlias> aliases) {
  const int n = plan.nranks;
  if (!aliases.empty() && static_cast<int>(aliases.size()) != n)
    throw std::logic_error("lowerPlan: need one BufferAlias per rank");
  auto aliasOf = [&](int r) { return aliases.empty() ? BufferAlias{} : aliases[static_cast<std::size_t>(r)]; };

  LoweredPlan out;
  out.nranks = n;
  out.sliceElems = sliceElems;
  out.scratchCount = plan.scratchCount;
  out.ranks.resize(static_cast<std::size_t>(n));
  std::map<std::pair<int, int>, std::vector<SendRecord>> sends;           // (from, to)
  std::map<std::pair<int, int>, std::vector<std::int32_t>> receives;     // (from, to) -> receiver's steps

  // A step's threads read and write in parallel: an operand may be its destination exactly (dst =
  // dst (op) x), never shifted against it.
  auto checkNoShiftedOverlap = [&](int r, const plan::Range& dst, const plan::Range& operand) {
    if (overlaps(dst, operand, aliasOf(r)) &&
        !(locate(dst.buf, dst.offset, aliasOf(r)) == locate(operand.buf, operand.offset, aliasOf(r))))
      throw std::logic_error("lowerPlan: rank " + std::to_string(r) + " has a step whose operand overlaps its destination "
                             "at another offset");
  };

  // Pass 1: each rank's slices in executor order (plan.h: phase by phase, slice-major).
  for (int r = 0; r < n; ++r) {
    auto& steps = out.ranks[static_cast<std::size_t>(r)].steps;
    const auto& ops = plan.ranks[static_cast<std::size_t>(r)];
    for (plan::SliceCursor cur(ops, sliceElems); !cur.done(); cur.advance()) {
      const plan::Op& op = ops[cur.opIndex()];
      const auto [lo, hi] = cur.sliceRange();
      if ((op.kind != plan::OpKind::Copy) && op.peer == r)
        throw std::logic_error("lowerPlan: rank " + std::to_string(r) + " sends to itself");
      switch (op.kind) {
        case plan::OpKind::Send:
          sends[{r, op.peer}].push_back({r, static_cast<std::int32_t>(steps.size()), sliceOf(op.src, lo, hi)});
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
          receives[{op.peer, r}].push_back(static_cast<std::int32_t>(steps.size()));
          steps.push_back(std::move(s));
          break;
        }
      }
    }
  }

  // Pass 2: the k-th send on a channel pairs with the k-th receive (FIFO).
  std::vector<std::vector<SentRange>> sent(static_cast<std::size_t>(n));
  for (const auto& [key, list] : sends) {
    auto it = receives.find(key);
    const std::size_t got = it == receives.end() ? 0 : it->second.size();
    if (got != list.size())
      throw std::logic_error("lowerPlan: rank " + std::to_string(key.first) + " sends " + std::to_string(list.size()) +
                             " slices to rank " + std::to_string(key.second) + ", which receives " + std::to_string(got));
    for (std::size_t k = 0; k < list.size(); ++k) {
      const SendRecord& snd = list[k];
      const std::int32_t idx = it->second[k];
      Step& step = out.ranks[static_cast<std::size_t>(key.second)].steps[static_cast<std::size_t>(idx)];
      if (step.count() != snd.src.count)
        throw std::logic_error("lowerPlan: rank " + std::to_string(key.second) + " expects " +
                               std::to_string(step.count()) + " elements, rank " + std::to_string(key.first) +
                               " sends " + std::to_string(snd.src.count));
      step.src = snd.src;
      addWait(step.waits, {snd.sender, snd.position - 1});
      sent[static_cast<std::size_t>(snd.sender)].push_back({snd.position, snd.src, {key.second, idx}});
    }
  }
  for (const auto& [key, list] : receives)
    if (!sends.contains(key))
      throw std::logic_error("lowerPlan: rank " + std::to_string(key.second) + " receives " + std::to_string(list.size()) +
                             " slices from rank " + std::to_string(key.first) + ", which sends none");

  // Pass 3: write after send. A step that overwrites a sent range waits for its reader.
  for (int r = 0; r < n; ++r) {
    auto& prog = out.ranks[static_cast<std::size_t>(r)];
    auto& pending = sent[static_cast<std::size_t>(r)];
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

  // Pass 4: which steps and starts are waited for; the largest step.
  auto mark = [&](const StepRef& w) {
    auto& prog = out.ranks[static_cast<std::size_t>(w.rank)];
    if (w.step == StepRef::kStart)
      prog.startSignals = true;
    else
      prog.steps[static_cast<std::size_t>(w.step)].signals = true;
  };
  out.usedBuffers.assign(static_cast<std::size_t>(n), 0);
  auto use = [&](int rank, const plan::Range& r) {
    if (r.count <= 0) return;
    out.usedBuffers[static_cast<std::size_t>(rank)] |= static_cast<std::uint8_t>(1U << static_cast<unsigned>(r.buf));
  };
  for (int r = 0; r < n; ++r)
    for (const Step& s : out.ranks[static_cast<std::size_t>(r)].steps) {
      use(r, s.dst);
      use(s.srcRank, s.src);
      if (s.kind == StepKind::Reduce) use(r, s.local);
    }
  for (const auto& prog : out.ranks) {
    for (const Step& s : prog.steps) {
      for (const StepRef& w : s.waits) mark(w);
      out.maxStepElems = std::max(out.maxStepElems, s.count());
    }
    for (const StepRef& w : prog.finalWaits) mark(w);
  }

  // Pass 5: a topological order, ranks taken round-robin as far as each can go.
  std::vector<std::int32_t> issued(static_cast<std::size_t>(n), 0);
  std::size_t total = 0;
  for (const auto& prog : out.ranks) total += prog.steps.size();
  out.issueOrder.reserve(total);
  while (out.issueOrder.size() < total) {
    bool progress = false;
    for (int r = 0; r < n; ++r) {
      const auto& steps = out.ranks[static_cast<std::size_t>(r)].steps;
      auto& i = issued[static_cast<std::size_t>(r)];
      while (i < static_cast<std::int32_t>(steps.size())) {
        const auto& waits = steps[static_cast<std::size_t>(i)].waits;
        const bool ready = std::all_of(waits.begin(), waits.end(),
                                       [&](const StepRef& w) { return w.step < issued[static_cast<std::size_t>(w.rank)]; });
        if (!ready) break;
        out.issueOrder.push_back({r, i++});
        progress = true;
      }
    }
    if (!progress)
      throw std::logic_error("lowerPlan: the steps of plan " + std::string(plan::name(plan.collective)) + "/" +
                             std::string(plan::name(plan.algorithm)) + " wait for each other in a cycle");
  }
  return out;
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
