// Plan lowering, checked three ways on every generator, rank counts 1..9, odd counts, slices, in
// place and out of place:
//  - the issue order is a topological order of all steps (no event waited on before it is recorded);
//  - no race: every pair of steps of different ranks that touch the same element (one writing) is
//    ordered by the waits (vector clocks), every peer read of a rank's memory comes after that rank
//    started, and every access to a rank's memory comes before that rank's end (its final waits);
//  - executing the steps on host memory, in the issue order and in random orders the waits allow,
//    gives exactly what the plan interpreter (interpret.h) gives.
// With no race every allowed order gives the same result, so these three together say that the GPU
// executor, which runs the steps in some allowed order, computes the plan.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

#include "collectives/cuda/lowering.h"
#include "collectives/plan/interpret.h"
#include "tests/cuda/lowered_checks.h"
#include "tests/cuda/lowered_memory.h"

namespace cclab::cuda {
namespace {

using test_support::kShapes;
using test_support::Memory;
using test_support::Shape;
using test_support::checkIssueOrder;
using test_support::checkNoRace;
using test_support::runSteps;

using plan::Algorithm;
using plan::Buf;
using plan::Collective;

struct Case {
  Shape shape;
  int nranks;
  std::int64_t count;
  std::int64_t slice;
  bool inPlace;
  plan::PlanShape layout = {};  // channels, ranks per node
};

std::string name(const Case& c) {
  return std::string(plan::name(c.shape.collective)) + "/" + std::string(plan::name(c.shape.algorithm)) + " p=" +
         std::to_string(c.nranks) + " n=" + std::to_string(c.count) + " slice=" + std::to_string(c.slice) +
         (c.inPlace ? " in place" : "") + " channels=" + std::to_string(c.layout.channels) +
         " ranksPerNode=" + std::to_string(c.layout.ranksPerNode);
}

void checkCase(const Case& c) {
  SCOPED_TRACE(name(c));
  const int root = c.nranks - 1;
  const plan::Plan p = plan::makePlan(c.shape.collective, c.shape.algorithm, c.nranks, c.count, root, c.layout);
  Memory reference(p, c.inPlace);
  plan::interpret<double>(p, reference.views, [](double a, double b) { return a + b; }, {c.slice, 0});
  const auto want = reference.results(p);

  Memory shapeOnly(p, c.inPlace);
  const LoweredPlan lp = lowerPlan(p, c.slice, shapeOnly.aliases);
  checkIssueOrder(lp);
  checkNoRace(lp, shapeOnly);

  {
    Memory mem(p, c.inPlace);
    runSteps(lp, mem, nullptr);
    EXPECT_EQ(mem.results(p), want) << "issue order";
  }
  for (unsigned seed = 1; seed <= 3; ++seed) {
    std::mt19937 rng(seed);
    Memory mem(p, c.inPlace);
    runSteps(lp, mem, &rng);
    EXPECT_EQ(mem.results(p), want) << "random order, seed " << seed;
  }
}

TEST(Lowering, EveryGeneratorIsRaceFreeAndComputesThePlan) {
  for (const Shape& shape : kShapes)
    for (int p = 1; p <= 9; ++p)
      for (std::int64_t count : {0, 1, 7, 37})
        for (std::int64_t slice : {0, 5})
          for (bool inPlace : {false, true}) {
            checkCase({shape, p, count, slice, inPlace});
            if (HasFailure()) return;
          }
}

// Channels become programs of their own (a rank's channels run side by side); ranks per node change
// the ring's orders and the hierarchical allreduce's structure.
TEST(Lowering, ChannelsAndNodesAreRaceFreeAndComputeThePlan) {
  for (const Shape& shape : kShapes)
    for (int p : {1, 2, 3, 4, 6, 8})
      for (int channels : {2, 3})
        for (int g : {0, 2})
          for (std::int64_t count : {1, 37})
            for (bool inPlace : {false, true}) {
              if (g > 0 && p % g != 0) continue;
              checkCase({shape, p, count, 5, inPlace, {channels, g}});
              if (HasFailure()) return;
            }
}

TEST(Lowering, EveryChannelIsItsOwnProgram) {
  const plan::Plan p = plan::makePlan(Collective::AllReduce, Algorithm::Ring, 4, 1000, 0, {4, 2});
  const LoweredPlan lp = lowerPlan(p, 0);
  ASSERT_EQ(lp.programs.size(), 16U);
  for (int r = 0; r < 4; ++r) {
    const auto programs = lp.programsOf(r);
    ASSERT_EQ(programs.size(), 4U);
    std::int32_t eventBase = 0;
    for (int c = 0; c < 4; ++c) {
      EXPECT_EQ(programs[c].channel, c);
      EXPECT_EQ(programs[c].eventBase, eventBase);
      eventBase += static_cast<std::int32_t>(programs[c].steps.size());
      for (const Step& s : programs[c].steps)
        for (const StepRef& w : s.waits) EXPECT_EQ(lp.programs[w.program].channel, c) << "channels never wait on each other";
    }
    EXPECT_EQ(lp.stepsOfRank(r), static_cast<std::size_t>(eventBase));
  }
}

// A ReduceAll slice is p steps: a copy of rank 0's range, then a reduce of each next rank's, so every
// rank folds in the same order.
TEST(Lowering, ReduceAllFoldsInRankOrder) {
  const int p = 5;
  const LoweredPlan lp = lowerPlan(plan::makePlan(Collective::AllReduce, Algorithm::OneShot, p, 64), 0);
  for (int r = 0; r < p; ++r) {
    const RankProgram& prog = lp.programsOf(r)[0];
    ASSERT_EQ(prog.steps.size(), static_cast<std::size_t>(p) + 1);  // p folding steps and the copy out
    for (int q = 0; q < p; ++q) {
      EXPECT_EQ(prog.steps[q].srcRank, q);
      EXPECT_EQ(prog.steps[q].kind, q == 0 ? StepKind::Copy : StepKind::Reduce);
    }
  }
}

TEST(Lowering, LargerCountsWithSmallSlices) {
  for (const Shape& shape : kShapes)
    for (int p : {2, 3, 4, 8}) {
      checkCase({shape, p, 1001, 64, false});
      checkCase({shape, p, 1001, 0, true});
      if (HasFailure()) return;
    }
}

TEST(Lowering, RingAllReduceShape) {
  const int p = 4;
  const std::int64_t n = 400;
  const LoweredPlan lp = lowerPlan(plan::allReduceRing(p, n), 0);
  for (int r = 0; r < p; ++r) {
    ASSERT_EQ(lp.programsOf(r).size(), 1U);
    const RankProgram& prog = lp.programsOf(r)[0];
    ASSERT_EQ(prog.steps.size(), 2u * (p - 1));  // p-1 reduce steps, then p-1 copy steps
    for (int k = 0; k < p - 1; ++k) EXPECT_EQ(prog.steps[k].kind, StepKind::Reduce);
    for (int k = p - 1; k < 2 * (p - 1); ++k) EXPECT_EQ(prog.steps[k].kind, StepKind::Copy);
    const int prev = (r + p - 1) % p;
    EXPECT_EQ(prog.steps[0].srcRank, prev);
    EXPECT_EQ(prog.steps[0].waits, (std::vector<StepRef>{{prev, StepRef::kStart}}));  // reads prev's input
    EXPECT_EQ(prog.steps[1].waits, (std::vector<StepRef>{{prev, 0}}));                 // prev's partial sum
    EXPECT_TRUE(prog.startSignals);
    EXPECT_FALSE(prog.finalWaits.empty());  // next still reads its last chunk
    EXPECT_EQ(lp.programs[prog.finalWaits.front().program].rank, (r + 1) % p);
  }
  EXPECT_EQ(lp.maxStepElems, n / p);
  EXPECT_EQ(lp.stepCount(), static_cast<std::size_t>(p * 2 * (p - 1)));
}

TEST(Lowering, RingTrafficIsFiveTimesPMinusOneOverPOfTheBufferPerRank) {
  // Reduce-scatter: p-1 steps reading two chunks and writing one; allgather: p-1 steps reading one
  // and writing one. Per rank 5(p-1)/p x n elements; over all p ranks 5(p-1) x n (docs/cuda.md).
  for (int p : {2, 4, 8}) {
    const std::int64_t n = 1024 * p;
    const Traffic t = traffic(lowerPlan(plan::allReduceRing(p, n), 0));
    EXPECT_EQ(t.readElems, 3 * (p - 1) * n);
    EXPECT_EQ(t.writtenElems, 2 * (p - 1) * n);
    EXPECT_EQ(t.totalElems(), 5 * (p - 1) * n);
  }
}

TEST(Lowering, SlicingMultipliesStepsNotTraffic) {
  const plan::Plan p = plan::allReduceRing(4, 4000);
  const LoweredPlan whole = lowerPlan(p, 0), sliced = lowerPlan(p, 100);
  EXPECT_EQ(sliced.stepCount(), whole.stepCount() * 10);
  EXPECT_EQ(traffic(sliced).totalElems(), traffic(whole).totalElems());
  EXPECT_EQ(sliced.maxStepElems, 100);
}

TEST(Lowering, InPlaceCopiesOntoThemselvesVanish) {
  const plan::Plan p = plan::allReduceRing(1, 10);  // one rank: a single copy input -> output
  EXPECT_EQ(lowerPlan(p, 0).stepCount(), 1u);
  const BufferAlias inPlace{BufferAlias::Kind::InputInOutput, 0};
  EXPECT_EQ(lowerPlan(p, 0, std::vector<BufferAlias>{inPlace}).stepCount(), 0u);
}

TEST(Lowering, RecordsWhichBuffersOfEachRankThePlanTouches) {
  constexpr std::uint8_t kIn = 1U << static_cast<unsigned>(Buf::Input);
  constexpr std::uint8_t kOut = 1U << static_cast<unsigned>(Buf::Output);
  const LoweredPlan ring = lowerPlan(plan::allReduceRing(4, 100), 0);
  for (std::uint8_t used : ring.usedBuffers) EXPECT_EQ(used, kIn | kOut);
  const LoweredPlan bcast = lowerPlan(plan::broadcastChain(3, 100, 0), 0);
  EXPECT_TRUE(bcast.usedBuffers[0] & kIn);   // the root's input is read
  EXPECT_FALSE(bcast.usedBuffers[1] & kIn);  // the others' inputs are not
  EXPECT_TRUE(bcast.usedBuffers[1] & kOut);
  EXPECT_EQ(lowerPlan(plan::allReduceRing(4, 0), 0).usedBuffers, std::vector<std::uint8_t>(4, 0));
}

TEST(Lowering, RejectsUnmatchedAndCyclicPlans) {
  plan::Plan unmatched;
  unmatched.nranks = 2;
  unmatched.count = 4;
  unmatched.ranks.resize(2);
  unmatched.ranks[0].push_back({plan::OpKind::Send, 1, 0, {Buf::Input, 0, 4}, {}});
  EXPECT_THROW(lowerPlan(unmatched, 0), std::logic_error);

  plan::Plan cyclic = unmatched;  // each rank first receives from the other, then sends
  cyclic.ranks[0] = {{plan::OpKind::Recv, 1, 0, {}, {Buf::Output, 0, 4}},
                     {plan::OpKind::Send, 1, 1, {Buf::Output, 0, 4}, {}}};
  cyclic.ranks[1] = cyclic.ranks[0];
  cyclic.ranks[1][0].peer = 0;
  cyclic.ranks[1][1].peer = 0;
  EXPECT_THROW(lowerPlan(cyclic, 0), std::logic_error);

  plan::Plan sizes = unmatched;  // 4 sent, 3 expected
  sizes.ranks[1].push_back({plan::OpKind::Recv, 0, 0, {}, {Buf::Output, 0, 3}});
  EXPECT_THROW(lowerPlan(sizes, 0), std::logic_error);
}

}  // namespace
}  // namespace cclab::cuda
