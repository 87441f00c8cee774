// Test support shared by the lowering tests: executing a lowered plan's steps on host memory (in the
// issue order, in random orders the waits allow, or in an adversarial one), and the two structural
// checks (the issue order is topological; no race, by vector clocks over programs).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <random>
#include <utility>
#include <vector>

#include "collectives/cuda/lowering.h"
#include "tests/cuda/lowered_memory.h"

namespace cclab::cuda::test_support {

inline void execute(const LoweredPlan& lp, const Memory& mem, int rank, const Step& s) {
  double* dst = mem.at(rank, s.dst);
  const double* src = mem.at(s.srcRank, s.src);
  std::vector<double> tmp(src, src + s.count());
  if (s.kind == StepKind::Reduce) {
    const double* local = mem.at(rank, s.local);
    for (std::int64_t i = 0; i < s.count(); ++i) tmp[static_cast<std::size_t>(i)] += local[i];
  }
  std::copy(tmp.begin(), tmp.end(), dst);
  (void)lp;
}

// Which program runs next: the issue order's, a random ready one (rng), or always the ready program
// of the lowest or the highest index (adversarial orders: a program runs as early as its waits allow).
enum class Pick { Issue, Random, Lowest, Highest };

// Runs the steps in an order the waits allow: the issue order (rng == nullptr and Pick::Random or
// Pick::Issue), a random one, or the Lowest / Highest order. The unit of order is a program (a rank's
// channel): its steps run in order, programs independently.
inline void runSteps(const LoweredPlan& lp, const Memory& mem, std::mt19937* rng, Pick pick = Pick::Random) {
  const auto& programs = lp.programs;
  if (!rng && pick != Pick::Lowest && pick != Pick::Highest) {
    for (const StepRef& ref : lp.issueOrder)
      execute(lp, mem, programs[ref.program].rank, programs[ref.program].steps[ref.step]);
    return;
  }
  const int np = static_cast<int>(programs.size());
  std::vector<std::int32_t> done(np, 0);
  for (;;) {
    std::vector<int> ready;
    for (int q = 0; q < np; ++q) {
      const auto& steps = programs[q].steps;
      if (done[q] >= static_cast<std::int32_t>(steps.size())) continue;
      const auto& waits = steps[done[q]].waits;
      if (std::all_of(waits.begin(), waits.end(), [&](const StepRef& w) { return w.step < done[w.program]; }))
        ready.push_back(q);
    }
    if (ready.empty()) break;
    const int q = pick == Pick::Lowest ? ready.front() : pick == Pick::Highest ? ready.back() :
                  ready[std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(*rng)];
    execute(lp, mem, programs[q].rank, programs[q].steps[done[q]]);
    ++done[q];
  }
  for (int q = 0; q < np; ++q) ASSERT_EQ(done[q], static_cast<std::int32_t>(programs[q].steps.size()));
}

inline void checkIssueOrder(const LoweredPlan& lp) {
  const auto& programs = lp.programs;
  ASSERT_EQ(lp.firstProgram.size(), static_cast<std::size_t>(lp.nranks) + 1);
  for (int r = 0; r < lp.nranks; ++r) {
    ASSERT_LT(lp.firstProgram[r], lp.firstProgram[r + 1]) << "every rank has a program";
    for (const RankProgram& prog : lp.programsOf(r)) ASSERT_EQ(prog.rank, r);
  }
  std::vector<std::int32_t> issued(programs.size(), 0);
  std::size_t total = 0;
  for (const auto& prog : programs) total += prog.steps.size();
  ASSERT_EQ(lp.issueOrder.size(), total);
  for (const StepRef& ref : lp.issueOrder) {
    ASSERT_EQ(ref.step, issued[ref.program]) << "program order";
    const auto& waits = programs[ref.program].steps[ref.step].waits;
    for (const StepRef& w : waits) {
      ASSERT_NE(w.program, ref.program);
      ASSERT_EQ(std::count_if(waits.begin(), waits.end(), [&](const StepRef& x) { return x.program == w.program; }), 1)
          << "at most one wait per program";
      ASSERT_LT(w.step, issued[w.program]) << "waits on a step not yet issued";
      if (w.step == StepRef::kStart)
        ASSERT_TRUE(programs[w.program].startSignals);
      else
        ASSERT_TRUE(programs[w.program].steps[w.step].signals);
    }
    ++issued[ref.program];
  }
}

// Vector clocks over programs: clock[q] = the latest step of program q known finished (kStart:
// started; kNever: nothing).
constexpr std::int32_t kNever = INT_MIN;

inline void checkNoRace(const LoweredPlan& lp, const Memory& mem) {
  const auto& programs = lp.programs;
  const int np = static_cast<int>(programs.size());
  std::vector<std::vector<std::vector<std::int32_t>>> clocks(np);
  auto startClock = [&](int q) {
    std::vector<std::int32_t> c(np, kNever);
    c[q] = StepRef::kStart;
    return c;
  };
  auto clockOf = [&](const StepRef& w) { return w.step == StepRef::kStart ? startClock(w.program) : clocks[w.program][w.step]; };
  auto join = [](std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::max(a[i], b[i]);
  };
  for (int q = 0; q < np; ++q) clocks[q].resize(programs[q].steps.size());
  for (const StepRef& ref : lp.issueOrder) {
    auto c = ref.step == 0 ? startClock(ref.program) : clocks[ref.program][ref.step - 1];
    for (const StepRef& w : programs[ref.program].steps[ref.step].waits) join(c, clockOf(w));
    c[ref.program] = ref.step;
    clocks[ref.program][ref.step] = c;
  }
  // A rank is done when all its programs are, with their final waits.
  std::vector<std::vector<std::int32_t>> rankEnd(lp.nranks, std::vector<std::int32_t>(np, kNever));
  for (int q = 0; q < np; ++q) {
    auto end = programs[q].steps.empty() ? startClock(q) : clocks[q].back();
    for (const StepRef& w : programs[q].finalWaits) join(end, clockOf(w));
    join(rankEnd[programs[q].rank], end);
  }

  struct Access {
    int program;
    std::int32_t step;
    bool write;
  };
  // Does y know that x finished (x issued before y)?
  auto after = [&](const Access& x, const Access& y) {
    return x.program == y.program || clocks[y.program][y.step][x.program] >= x.step;
  };
  // Every element of every rank's storage (real addresses: aliasing included) gets an index.
  struct Storage {
    const double* begin;
    std::size_t size, base;
  };
  std::vector<Storage> storage;
  std::size_t elements = 0;
  for (const auto* bufs : {&mem.input, &mem.output, &mem.scratch})
    for (const auto& v : *bufs) {
      storage.push_back({v.data(), v.size(), elements});
      elements += v.size();
    }
  auto indexOf = [&](const double* p) {
    for (const Storage& st : storage)
      if (p >= st.begin && p < st.begin + st.size) return st.base + static_cast<std::size_t>(p - st.begin);
    ADD_FAILURE() << "an access outside every rank's memory";
    return std::size_t{0};
  };
  // Per element, in issue order (a topological order): each access must come after the element's
  // last write, and a write also after every read since that write. By induction over the issue
  // order this orders every conflicting pair (the order is transitive), as checking all pairs would.
  std::vector<Access> lastWrite(elements, Access{-1, 0, true});
  std::vector<std::int32_t> readsHead(elements, -1);  // reads since the last write: a list in `reads`
  std::vector<std::pair<Access, std::int32_t>> reads;   // (read, next)
  bool raced = false;
  auto race = [&](const Access& x, const Access& y) {
    ADD_FAILURE() << "race: program " << x.program << " step " << x.step << (x.write ? " writes" : " reads")
                  << ", program " << y.program << " step " << y.step << (y.write ? " writes" : " reads");
    raced = true;
  };
  auto touch = [&](int owner, const plan::Range& range, int q, std::int32_t step, bool write) {
    if (range.count <= 0 || raced) return;
    const Access y{q, step, write};
    const std::size_t first = indexOf(mem.at(owner, range));
    for (std::size_t e = first; e < first + static_cast<std::size_t>(range.count) && !raced; ++e) {
      if (lastWrite[e].program >= 0 && !after(lastWrite[e], y)) race(lastWrite[e], y);
      if (!write) {
        reads.push_back({y, readsHead[e]});
        readsHead[e] = static_cast<std::int32_t>(reads.size() - 1);
        continue;
      }
      for (std::int32_t k = readsHead[e]; k >= 0 && !raced; k = reads[static_cast<std::size_t>(k)].second)
        if (!after(reads[static_cast<std::size_t>(k)].first, y)) race(reads[static_cast<std::size_t>(k)].first, y);
      lastWrite[e] = y;
      readsHead[e] = -1;
    }
    if (owner != programs[q].rank) {
      const auto& c = clocks[q][step];
      bool started = false;  // some program of the owner has started
      for (const RankProgram& prog : lp.programsOf(owner))
        started = started || c[static_cast<std::size_t>(&prog - programs.data())] >= StepRef::kStart;
      EXPECT_TRUE(started) << "program " << q << " step " << step << " reads rank " << owner << " before it started";
      EXPECT_GE(rankEnd[owner][q], step) << "rank " << owner << " ends before program " << q << " step " << step
                                         << " read its memory";
    }
  };
  for (const StepRef& ref : lp.issueOrder) {  // a step's reads, then its write (one program: never a race)
    const int q = ref.program;
    const Step& s = programs[q].steps[ref.step];
    touch(s.srcRank, s.src, q, ref.step, false);
    if (s.kind == StepKind::Reduce) touch(programs[q].rank, s.local, q, ref.step, false);
    touch(programs[q].rank, s.dst, q, ref.step, true);
  }
}

}  // namespace cclab::cuda::test_support
