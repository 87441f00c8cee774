// Plan lowering with phase deps (plan.h, Plan::deps): the hierarchical allreduce's node and network
// lanes pipelined over B >= 2 blocks, and two hand-made plans whose result is wrong when the lowering
// drops the wait a dep needs (so these tests can fail):
//  - a dep: a channel sends what another channel of its rank wrote in an earlier phase;
//  - write after send across channels: a channel overwrites a range another channel of its rank sent
//    and the receiver has not read yet.
// Every lowered plan is checked as in lowering_test.cc: the issue order is topological, no race
// (vector clocks over all programs, a rank's own channels included), and executing the steps on host
// memory in the issue order, in random orders and in the two adversarial orders (always the ready
// program of the lowest / highest index) gives exactly the interpreter's result.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "collectives/cuda/lowering.h"
#include "collectives/plan/interpret.h"
#include "collectives/plan/validate.h"
#include "tests/cuda/lowered_checks.h"
#include "tests/cuda/lowered_memory.h"

namespace cclab::cuda {
namespace {

using plan::Buf;
using plan::OpKind;
using test_support::Memory;
using test_support::Pick;

std::vector<std::vector<double>> interpreted(const plan::Plan& p, std::int64_t slice, bool inPlace, bool interleaved) {
  Memory mem(p, inPlace);
  plan::interpret<double>(p, mem.views, [](double a, double b) { return a + b; }, {slice, 0, interleaved});
  return mem.results(p);
}

std::vector<std::vector<double>> executed(const plan::Plan& p, const LoweredPlan& lp, bool inPlace, Pick pick,
                                          unsigned seed = 0) {
  Memory mem(p, inPlace);
  std::mt19937 rng(seed);
  test_support::runSteps(lp, mem, pick == Pick::Random ? &rng : nullptr, pick);
  return mem.results(p);
}

void checkLowered(const plan::Plan& p, std::int64_t slice, bool inPlace, unsigned seeds = 3) {
  const auto want = interpreted(p, slice, inPlace, true);
  EXPECT_EQ(interpreted(p, slice, inPlace, false), want) << "the interpreter, channels one after the other";
  Memory shapeOnly(p, inPlace);
  const LoweredPlan lp = lowerPlan(p, slice, shapeOnly.aliases);
  test_support::checkIssueOrder(lp);
  test_support::checkNoRace(lp, shapeOnly);
  EXPECT_EQ(executed(p, lp, inPlace, Pick::Issue), want) << "issue order";
  EXPECT_EQ(executed(p, lp, inPlace, Pick::Lowest), want) << "lowest program first";
  EXPECT_EQ(executed(p, lp, inPlace, Pick::Highest), want) << "highest program first";
  for (unsigned seed = 1; seed <= seeds; ++seed)
    EXPECT_EQ(executed(p, lp, inPlace, Pick::Random, seed), want) << "random order, seed " << seed;
}

struct Layout {
  int nranks;
  int ranksPerNode;
};
constexpr Layout kLayouts[] = {{6, 3}, {8, 2}, {8, 4}, {12, 2}, {12, 3}, {12, 4}};

// PlanShape::blocks asks for B = 3 blocks on one channel and B = 2 on two (the automatic choice,
// hierarchicalBlocks, needs far more elements for that). Whole ops out of place, and slices of 3001
// elements in place.
TEST(LoweringDeps, HierarchicalOverSeveralBlocksIsRaceFreeAndComputesThePlan) {
  for (const Layout l : kLayouts)
    for (int channels : {1, 2})
      for (auto [slice, inPlace] : {std::pair<std::int64_t, bool>{0, false}, {3001, true}}) {
        const std::int64_t count = channels == 1 ? 40009 : 2 * 2 * std::int64_t{l.nranks} * 1024 + 7;
        const int blocks = channels == 1 ? 3 : 2;
        SCOPED_TRACE("p=" + std::to_string(l.nranks) + " g=" + std::to_string(l.ranksPerNode) + " channels=" +
                     std::to_string(channels) + " n=" + std::to_string(count) + " slice=" + std::to_string(slice) +
                     (inPlace ? " in place" : ""));
        const plan::Plan p = plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Hierarchical, l.nranks, count, 0,
                                            {channels, l.ranksPerNode, blocks});
        ASSERT_EQ(p.nchannels, 2 * channels);
        ASSERT_GE(p.nphases, 4) << "B >= 2 blocks (phases B + 2)";
        ASSERT_FALSE(p.deps.empty());
        checkLowered(p, slice, inPlace, 2);
        if (HasFailure()) return;
      }
}

// Small and awkward counts with B forced to 2..4: empty shards, empty pieces, whole phases without a
// step, and slices that cut every op.
TEST(LoweringDeps, HierarchicalSmallCountsAndManyBlocks) {
  for (const Layout l : kLayouts)
    for (std::int64_t count : {1, 7, 37, 1001})
      for (int blocks : {2, 3, 4})
        for (std::int64_t slice : {0, 5})
          for (bool inPlace : {false, true}) {
            SCOPED_TRACE("p=" + std::to_string(l.nranks) + " g=" + std::to_string(l.ranksPerNode) + " n=" + std::to_string(count) +
                         " B=" + std::to_string(blocks) + " slice=" + std::to_string(slice) + (inPlace ? " in place" : ""));
            const plan::Plan p = plan::allReduceHierarchical(l.nranks, count, l.ranksPerNode, blocks);
            ASSERT_EQ(p.nphases, blocks + 2);
            checkLowered(p, slice, inPlace, 2);
            if (HasFailure()) return;
          }
}

// The network lane opens every phase with a send, so its first step is a gate of its own: no data,
// waiting for the node lane's reduce-scatter of block 0 (its last step of phase 0); that send's
// receiver waits for the gate.
TEST(LoweringDeps, TheNetworkLaneOpensWithAGateOnTheNodeLane) {
  const int p = 8, g = 2;
  const plan::Plan pl = plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Hierarchical, p, 40009, 0, {1, g, 3});
  const LoweredPlan lp = lowerPlan(pl, 0);
  for (int r = 0; r < p; ++r) {
    const auto programs = lp.programsOf(r);
    ASSERT_EQ(programs.size(), 2U);
    const int node = lp.firstProgram[static_cast<std::size_t>(r)], net = node + 1;
    const Step& gate = programs[1].steps.at(0);
    EXPECT_EQ(gate.count(), 0);
    EXPECT_EQ(gate.waits, (std::vector<StepRef>{{node, g - 2}})) << "rank " << r << ": g-1 reduce steps in phase 0";
    EXPECT_TRUE(gate.signals);
    // The node lane's first step of phase 2 (block 2's reduce-scatter) waits for the network lane's
    // phase 1, which ends with its last step of block 0.
    bool waitsOnNetwork = false;
    for (const Step& s : programs[0].steps)
      for (const StepRef& w : s.waits) waitsOnNetwork = waitsOnNetwork || w.program == net;
    EXPECT_TRUE(waitsOnNetwork) << "rank " << r;
  }
  for (const RankProgram& prog : lp.programs)  // every receiver of a network send waits for the gate or later
    for (const Step& s : prog.steps)
      for (const StepRef& w : s.waits) {
        const RankProgram& sender = lp.programs[static_cast<std::size_t>(w.program)];
        if (sender.channel == 1 && sender.rank != prog.rank) {
          EXPECT_GE(w.step, 0) << "a network send is ready at its gate";
        }
      }
}

plan::Plan twoChannelPlan() {
  plan::Plan p;
  p.collective = plan::Collective::AllReduce;  // only for the buffer sizes: in = out = count
  p.algorithm = plan::Algorithm::Ring;
  p.nranks = 2;
  p.count = 8;
  p.nphases = 2;
  p.nchannels = 2;
  p.ranks.resize(2);
  p.deps = {{1, 1, 0, 0}};  // channel 1's phase 1 after channel 0's phase 0
  return p;
}

std::vector<std::string> structuralProblems(const plan::Plan& p) {
  plan::ValidateOptions o;
  o.symbolic = false;  // not a collective: no expected result to compare with
  return plan::validate(p, o);
}

// Rank 0: channel 0 copies in[0,4) to out[0,4) (phase 0); channel 1 sends out[0,4) to rank 1 (phase
// 1, after channel 0's phase 0). Rank 1 receives it on channel 1. Without the dep's wait rank 1 could
// read rank 0's out[0,4) before the copy wrote it.
TEST(LoweringDeps, AChannelSendsWhatAnotherWrote) {
  plan::Plan p = twoChannelPlan();
  p.ranks[0] = {{OpKind::Copy, -1, 0, {Buf::Input, 0, 4}, {Buf::Output, 0, 4}, 0},
                {OpKind::Send, 1, 1, {Buf::Output, 0, 4}, {}, 1}};
  p.ranks[1] = {{OpKind::Recv, 0, 1, {}, {Buf::Output, 0, 4}, 1}};
  ASSERT_EQ(structuralProblems(p), std::vector<std::string>{});
  for (bool inPlace : {false, true}) checkLowered(p, 0, inPlace);
  checkLowered(p, 3, false);

  // The send opens channel 1's phase 1, so a gate step carries the wait; drop it and the highest
  // program (rank 1's) reads rank 0's output first.
  const auto want = interpreted(p, 0, false, true);
  LoweredPlan lp = lowerPlan(p, 0);
  const RankProgram& sender = lp.programsOf(0)[1];
  ASSERT_EQ(sender.steps.size(), 1U);
  EXPECT_EQ(sender.steps[0].count(), 0);
  EXPECT_EQ(sender.steps[0].waits, (std::vector<StepRef>{{0, 0}}));
  lp.programs[1].steps[0].waits.clear();
  EXPECT_NE(executed(p, lp, false, Pick::Highest), want) << "the dep's wait is what makes it right";
}

// Rank 0: channel 0 copies in[0,4) to out[0,4) and sends out[0,4) to rank 1 (phase 0); channel 1
// then overwrites out[0,4) with in[4,8) (phase 1, after channel 0's phase 0). The single-copy send
// is still unread until rank 1's step runs, so channel 1's copy must wait for rank 1's read.
TEST(LoweringDeps, AChannelOverwritesWhatAnotherSentOnlyAfterItWasRead) {
  plan::Plan p = twoChannelPlan();
  p.ranks[0] = {{OpKind::Copy, -1, 0, {Buf::Input, 0, 4}, {Buf::Output, 0, 4}, 0},
                {OpKind::Send, 1, 0, {Buf::Output, 0, 4}, {}, 0},
                {OpKind::Copy, -1, 1, {Buf::Input, 4, 4}, {Buf::Output, 0, 4}, 1}};
  p.ranks[1] = {{OpKind::Recv, 0, 0, {}, {Buf::Output, 0, 4}, 0}};
  ASSERT_EQ(structuralProblems(p), std::vector<std::string>{});
  checkLowered(p, 0, false);
  checkLowered(p, 3, false);

  const auto want = interpreted(p, 0, false, true);
  LoweredPlan lp = lowerPlan(p, 0);
  ASSERT_EQ(lp.programs.size(), 3U);  // rank 0: channels 0 and 1; rank 1: channel 0
  const Step& overwrite = lp.programs[1].steps.at(0);
  EXPECT_EQ(overwrite.waits, (std::vector<StepRef>{{0, 0}, {2, 0}})) << "the dep, and rank 1's read";
  EXPECT_TRUE(lp.programs[0].finalWaits.empty()) << "channel 1's overwrite already waits for the reader";
  lp.programs[1].steps[0].waits = {{0, 0}};  // keep the dep, drop the write-after-send wait
  EXPECT_NE(executed(p, lp, false, Pick::Lowest), want) << "the write-after-send wait is what makes it right";
}

// A dep on a channel that has no step in the phases named is met at once: no wait, no gate wait.
TEST(LoweringDeps, ADepOnAChannelWithoutStepsNamesNothing) {
  plan::Plan p = twoChannelPlan();
  p.ranks[0] = {{OpKind::Send, 1, 0, {Buf::Input, 0, 4}, {}, 0},
                {OpKind::Copy, -1, 1, {Buf::Input, 4, 4}, {Buf::Output, 4, 4}, 1}};
  p.ranks[1] = {{OpKind::Recv, 0, 0, {}, {Buf::Output, 0, 4}, 0}};
  checkLowered(p, 0, false);
  const LoweredPlan lp = lowerPlan(p, 0);
  EXPECT_TRUE(lp.programs[1].steps.at(0).waits.empty());
}

}  // namespace
}  // namespace cclab::cuda
