// The staging plan of the multi-process CUDA backend (staging_plan.h), checked against the plan's
// slices: exactly the plan's send slices to another node are staged, per connection in order; every
// message has bytes of its own on both sides; and executing the lowered plan on host memory with
// every inter-node read replaced by the staged copy (snapshot of the sender's range when its `ready`
// step is done, "sent" into the receiver's pinned bytes, read from there) gives exactly what the plan
// interpreter gives, in the issue order and in random orders the waits allow.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <tuple>

#include "collectives/core/errors.h"
#include "collectives/cuda/lowering.h"
#include "collectives/gpu_proc/staging_plan.h"
#include "tests/cuda/lowered_memory.h"

namespace cclab::cuda {
namespace {

using test_support::Memory;
using test_support::Shape;
using plan::Algorithm;
using plan::Collective;

struct Pinned {  // per rank: its outgoing and incoming staging bytes
  std::vector<std::vector<std::byte>> send, recv;
};

// Snapshots every message whose sender just passed `ref` (kStart: the program's start) and "sends" it.
void stageAfter(const StagingPlan& sp, const Memory& mem, StepRef ref, Pinned& pinned) {
  for (const StagedMessage& m : sp.messages) {
    if (!(m.ready == ref)) continue;
    std::byte* out = pinned.send[static_cast<std::size_t>(m.from)].data() + m.sendOffset;
    std::memcpy(out, mem.at(m.from, m.src), m.bytes);
    std::memcpy(pinned.recv[static_cast<std::size_t>(m.to)].data() + m.recvOffset, out, m.bytes);  // MPI
  }
}

void runStep(const LoweredPlan& lp, const StagingPlan& sp, const Memory& mem, const Pinned& pinned, StepRef ref) {
  const RankProgram& prog = lp.programs[static_cast<std::size_t>(ref.program)];
  const Step& s = prog.steps[static_cast<std::size_t>(ref.step)];
  std::vector<double> tmp(static_cast<std::size_t>(s.count()));
  const int m = sp.messageOf(ref);
  if (m >= 0) {
    const StagedMessage& msg = sp.messages[static_cast<std::size_t>(m)];
    std::memcpy(tmp.data(), pinned.recv[static_cast<std::size_t>(prog.rank)].data() + msg.recvOffset, msg.bytes);
  } else {
    const double* src = mem.at(s.srcRank, s.src);
    std::copy(src, src + s.count(), tmp.begin());
  }
  if (s.kind == StepKind::Reduce) {
    const double* local = mem.at(prog.rank, s.local);
    for (std::int64_t i = 0; i < s.count(); ++i) tmp[static_cast<std::size_t>(i)] += local[i];
  }
  std::copy(tmp.begin(), tmp.end(), mem.at(prog.rank, s.dst));
}

void runStaged(const LoweredPlan& lp, const StagingPlan& sp, const Memory& mem, std::mt19937* rng) {
  Pinned pinned;
  for (int r = 0; r < lp.nranks; ++r) {
    pinned.send.emplace_back(sp.sendBytes[static_cast<std::size_t>(r)]);
    pinned.recv.emplace_back(sp.recvBytes[static_cast<std::size_t>(r)]);
  }
  const int np = static_cast<int>(lp.programs.size());
  for (int q = 0; q < np; ++q) stageAfter(sp, mem, {q, StepRef::kStart}, pinned);  // only the own rank's steps write its memory
  if (!rng) {
    for (const StepRef& ref : lp.issueOrder) {
      runStep(lp, sp, mem, pinned, ref);
      stageAfter(sp, mem, ref, pinned);
    }
    return;
  }
  std::vector<std::int32_t> done(static_cast<std::size_t>(np), 0);
  for (;;) {
    std::vector<int> ready;
    for (int q = 0; q < np; ++q) {
      const auto& steps = lp.programs[static_cast<std::size_t>(q)].steps;
      if (done[static_cast<std::size_t>(q)] >= static_cast<std::int32_t>(steps.size())) continue;
      const auto& waits = steps[static_cast<std::size_t>(done[static_cast<std::size_t>(q)])].waits;
      if (std::all_of(waits.begin(), waits.end(), [&](const StepRef& w) { return w.step < done[static_cast<std::size_t>(w.program)]; }))
        ready.push_back(q);
    }
    if (ready.empty()) break;
    const int q = ready[std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(*rng)];
    const StepRef ref{q, done[static_cast<std::size_t>(q)]++};
    runStep(lp, sp, mem, pinned, ref);
    stageAfter(sp, mem, ref, pinned);
  }
}

// The plan's send slices (plan::SliceCursor, the executors' order) from a rank to another node.
std::int64_t offNodeSendSlices(const plan::Plan& p, std::int64_t slice, int perNode) {
  std::int64_t n = 0;
  for (int r = 0; r < p.nranks; ++r) {
    const auto& ops = p.ranks[static_cast<std::size_t>(r)];
    for (plan::SliceCursor cur(ops, slice); !cur.done(); cur.advance()) {
      const plan::Op& op = ops[cur.opIndex()];
      if (op.kind == plan::OpKind::Send && op.peer / perNode != r / perNode) ++n;
    }
  }
  return n;
}

void checkStagingOf(const plan::Plan& pl, int perNode, std::int64_t slice, bool inPlace) {
  const Shape shape{pl.collective, pl.algorithm};
  const int p = pl.nranks;
  Memory reference(pl, inPlace);
  plan::interpret<double>(pl, reference.views, [](double a, double b) { return a + b; }, {slice, 0});
  Memory shapeOnly(pl, inPlace);
  const LoweredPlan lp = lowerPlan(pl, slice, shapeOnly.aliases);
  std::vector<int> nodeOf;
  for (int r = 0; r < p; ++r) nodeOf.push_back(r / perNode);
  const StagingPlan sp = planStaging(lp, nodeOf, sizeof(double));

  // Exactly the steps that read another node, each once; per connection in sequence.
  std::size_t crossing = 0;
  for (std::size_t q = 0; q < lp.programs.size(); ++q)
    for (std::size_t s = 0; s < lp.programs[q].steps.size(); ++s) {
      const Step& st = lp.programs[q].steps[s];
      const bool off = nodeOf[static_cast<std::size_t>(st.srcRank)] != nodeOf[static_cast<std::size_t>(lp.programs[q].rank)];
      const int m = sp.messageOf({static_cast<int>(q), static_cast<std::int32_t>(s)});
      ASSERT_EQ(m >= 0, off) << "program " << q << " step " << s;
      if (m < 0) continue;
      ++crossing;
      const StagedMessage& msg = sp.messages[static_cast<std::size_t>(m)];
      EXPECT_EQ(msg.from, st.srcRank);
      EXPECT_EQ(msg.to, lp.programs[q].rank);
      EXPECT_EQ(msg.bytes, static_cast<std::uint64_t>(st.count()) * sizeof(double));
      EXPECT_EQ(lp.programs[static_cast<std::size_t>(msg.ready.program)].rank, msg.from);
    }
  ASSERT_EQ(sp.messages.size(), crossing);
  if (slice > 0 && shape.collective == Collective::AllReduce && shape.algorithm != Algorithm::OneShot &&
      shape.algorithm != Algorithm::TwoShot) {  // ReduceAll's sends are not per-peer Send slices
    EXPECT_EQ(static_cast<std::int64_t>(sp.messages.size()), offNodeSendSlices(pl, slice, perNode)) << "the plan's slices to other nodes";
  }
  std::map<std::tuple<int, int, int>, std::int64_t> next;
  std::map<std::tuple<int, int, int>, StepRef> lastPost;
  for (int r = 0; r < p; ++r)
    for (int idx : sp.outgoing[static_cast<std::size_t>(r)]) {  // posted in this order by the sender
      const StagedMessage& m = sp.messages[static_cast<std::size_t>(idx)];
      EXPECT_EQ(m.from, r);
      const std::tuple<int, int, int> key{m.channel, m.from, m.to};
      EXPECT_EQ(m.sequence, next[key]++) << "FIFO per (channel, from, to)";
      EXPECT_EQ(m.postAfter.program, m.ready.program);
      EXPECT_GE(m.postAfter.step, m.ready.step);
      auto [last, fresh] = lastPost.try_emplace(key, m.postAfter);
      EXPECT_LE(last->second.step, m.postAfter.step) << "sends posted in sequence";
      last->second = m.postAfter;
    }
  // Bytes of its own for every message, on both sides.
  for (int r = 0; r < p; ++r) {
    for (const auto* list : {&sp.outgoing[static_cast<std::size_t>(r)], &sp.incoming[static_cast<std::size_t>(r)]}) {
      const bool out = list == &sp.outgoing[static_cast<std::size_t>(r)];
      std::uint64_t end = 0;
      for (int idx : *list) {
        const StagedMessage& m = sp.messages[static_cast<std::size_t>(idx)];
        const std::uint64_t off = out ? m.sendOffset : m.recvOffset;
        EXPECT_GE(off, end) << "overlap";
        EXPECT_EQ(off % kStagingAlign, 0U);
        end = off + m.bytes;
      }
      EXPECT_LE(end, out ? sp.sendBytes[static_cast<std::size_t>(r)] : sp.recvBytes[static_cast<std::size_t>(r)]);
    }
  }

  const auto want = reference.results(pl);
  {
    Memory mem(pl, inPlace);
    runStaged(lp, sp, mem, nullptr);
    EXPECT_EQ(mem.results(pl), want) << "issue order";
  }
  for (unsigned seed = 1; seed <= 2; ++seed) {
    std::mt19937 rng(seed);
    Memory mem(pl, inPlace);
    runStaged(lp, sp, mem, &rng);
    EXPECT_EQ(mem.results(pl), want) << "random order, seed " << seed;
  }
}

void checkStaging(Shape shape, int p, int perNode, int channels, std::int64_t count, std::int64_t slice, bool inPlace) {
  SCOPED_TRACE(std::string(plan::name(shape.collective)) + "/" + std::string(plan::name(shape.algorithm)) + " p=" + std::to_string(p) +
               " perNode=" + std::to_string(perNode) + " channels=" + std::to_string(channels) + " n=" + std::to_string(count) +
               " slice=" + std::to_string(slice) + (inPlace ? " in place" : ""));
  checkStagingOf(plan::makePlan(shape.collective, shape.algorithm, p, count, p - 1, {channels, perNode}), perNode, slice, inPlace);
}

TEST(StagingPlan, EveryGeneratorAcrossNodesComputesThePlan) {
  for (const Shape& shape : test_support::kShapes)
    for (auto [p, perNode] : {std::pair{2, 1}, {4, 2}, {6, 3}, {6, 2}, {8, 4}})
      for (int channels : {1, 2})
        for (std::int64_t count : {1, 7, 37})
          for (std::int64_t slice : {0, 5})
            for (bool inPlace : {false, true}) {
              checkStaging(shape, p, perNode, channels, count, slice, inPlace);
              if (HasFailure()) return;
            }
}

// The hierarchical allreduce pipelined over B >= 2 blocks (phase deps between its node and network
// lanes): a network send opens its phase, so its staged copy is taken after the gate step that waits
// for the node lane's reduce-scatter of the block (lowering.h), never from the program's start.
TEST(StagingPlan, HierarchicalOverSeveralBlocksAcrossNodesComputesThePlan) {
  for (auto [p, perNode] : {std::pair{8, 2}, {8, 4}, {12, 3}})
    for (std::int64_t count : {7, 37, 1001})
      for (int blocks : {2, 4})
        for (std::int64_t slice : {0, 5})
          for (bool inPlace : {false, true}) {
            SCOPED_TRACE("hier p=" + std::to_string(p) + " perNode=" + std::to_string(perNode) + " n=" + std::to_string(count) +
                         " B=" + std::to_string(blocks) + " slice=" + std::to_string(slice) + (inPlace ? " in place" : ""));
            checkStagingOf(plan::allReduceHierarchical(p, count, perNode, blocks), perNode, slice, inPlace);
            if (HasFailure()) return;
          }
  const plan::Plan big = plan::makePlan(Collective::AllReduce, Algorithm::Hierarchical, 8, 40009, 0, {1, 2, 3});
  ASSERT_GE(big.nphases, 4) << "B >= 2";
  SCOPED_TRACE("hier p=8 perNode=2 n=40009");
  checkStagingOf(big, 2, 3001, false);
  const LoweredPlan lp = lowerPlan(big, 3001);
  const StagingPlan sp = planStaging(lp, std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}, sizeof(double));
  ASSERT_FALSE(sp.messages.empty());
  for (const StagedMessage& m : sp.messages) {
    EXPECT_EQ(lp.programs[static_cast<std::size_t>(m.ready.program)].channel, 1) << "only the network lane leaves a node";
    EXPECT_GE(m.ready.step, 0) << "a network send is staged after its phase's gate, not at the start";
  }
}

TEST(StagingPlan, OneNodeStagesNothing) {
  const plan::Plan pl = plan::makePlan(Collective::AllReduce, Algorithm::Ring, 4, 100, 0, {1, 0});
  const StagingPlan sp = planStaging(lowerPlan(pl, 8), std::vector<int>(4, 0), 4);
  EXPECT_TRUE(sp.messages.empty());
  for (int r = 0; r < 4; ++r) EXPECT_EQ(sp.sendBytes[static_cast<std::size_t>(r)] + sp.recvBytes[static_cast<std::size_t>(r)], 0U);
}

// Ring allreduce over 2 nodes of 2 ranks, whole ops: the ring crosses between nodes twice per step
// (ranks 1 -> 2 and 3 -> 0), 2(p-1) = 6 steps each, so 12 messages of count/p elements.
TEST(StagingPlan, RingOverTwoNodesCrossesTwicePerStep) {
  const std::int64_t count = 1000;
  const plan::Plan pl = plan::makePlan(Collective::AllReduce, Algorithm::Ring, 4, count, 0, {1, 0});
  const StagingPlan sp = planStaging(lowerPlan(pl, 0), std::vector<int>{0, 0, 1, 1}, 4);
  ASSERT_EQ(sp.messages.size(), 12U);
  std::uint64_t bytes = 0;
  for (const StagedMessage& m : sp.messages) {
    EXPECT_TRUE((m.from == 1 && m.to == 2) || (m.from == 3 && m.to == 0)) << m.from << "->" << m.to;
    bytes += m.bytes;
  }
  EXPECT_EQ(bytes, 2U * 6U * (count / 4) * 4U) << "2 crossings x 6 steps x count/p floats";
  EXPECT_EQ(sp.outgoing[1].size(), 6U);
  EXPECT_EQ(sp.incoming[0].size(), 6U);
}

TEST(StagingPlan, RefusesABadNodeTable) {
  const LoweredPlan lp = lowerPlan(plan::makePlan(Collective::AllReduce, Algorithm::Ring, 3, 10, 0, {1, 0}), 0);
  EXPECT_THROW((void)planStaging(lp, std::vector<int>{0, 0}, 4), InvalidArgument);
  EXPECT_THROW((void)planStaging(lp, std::vector<int>{0, -1, 0}, 4), InvalidArgument);
  EXPECT_THROW((void)planStaging(lp, std::vector<int>{0, 0, 1}, 0), InvalidArgument);
}

}  // namespace
}  // namespace cclab::cuda
