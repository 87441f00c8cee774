// Every generator x nranks 1..16 x counts {0, 1, p-1, p+1, a prime} passes the validator: structure,
// matched channels, pipelining alignment, and a symbolic run (each output element holds every
// expected contribution exactly once) out of place and in place, whole ops and small slices, with a
// channel of capacity one.
#include <gtest/gtest.h>

#include <set>

#include "collectives/core/errors.h"
#include "collectives/plan/binary_tree.h"
#include "collectives/plan/validate.h"
#include "tests/plan/generator_cases.h"

namespace cclab::plan {
namespace {

using Case = testing::GeneratorCase;

class GeneratorTest : public ::testing::TestWithParam<Case> {};

TEST_P(GeneratorTest, ValidForEveryRankCountAndAwkwardCounts) {
  const Case c = GetParam();
  constexpr std::int64_t kPrime = 61;
  for (int p = 1; p <= 16; ++p) {
    const std::set<std::int64_t> counts{0, 1, p - 1, p + 1, kPrime};
    for (std::int64_t n : counts) {
      const std::set<int> roots = isRooted(c.collective) ? std::set<int>{0, p / 2, p - 1} : std::set<int>{0};
      for (int root : roots) {
        const Plan plan = makePlan(c.collective, c.algorithm, p, n, root);
        const auto problems = validate(plan);
        ASSERT_TRUE(problems.empty()) << name(c.collective) << "/" << name(c.algorithm) << " p=" << p << " n=" << n
                                      << " root=" << root << ": " << problems.front() << "\n"
                                      << dump(plan);
      }
    }
  }
}

// Channels {1, 2, 4} x node sizes (0: one node; 2, 3, 4 where they divide p; the ring changes its
// order per channel, hier its structure) x nranks 1..16 x awkward counts.
TEST_P(GeneratorTest, ValidWithChannelsAndNodes) {
  const Case c = GetParam();
  constexpr std::int64_t kPrime = 61;
  ValidateOptions fast;
  fast.sliceElems = {0, 2};
  for (int p = 1; p <= 16; ++p)
    for (int channels : {1, 2, 4})
      for (int g : {0, 2, 3, 4}) {
        if (g > 0 && p % g != 0) continue;
        for (std::int64_t n : std::set<std::int64_t>{0, 1, p + 1, kPrime}) {
          const int root = isRooted(c.collective) ? p - 1 : 0;
          const Plan plan = makePlan(c.collective, c.algorithm, p, n, root, {channels, g});
          const bool lanes = (c.algorithm == Algorithm::Hierarchical && g > 1 && g < p) ||  // node and network lanes
                             (c.collective == Collective::AllReduce && c.algorithm == Algorithm::Tree);  // up and down
          const int expected = c.collective == Collective::AllReduce && c.algorithm == Algorithm::DoubleBinaryTree
                                   ? std::max(2, channels)
                                   : lanes ? 2 * channels : channels;
          ASSERT_EQ(plan.nchannels, expected);
          const auto problems = validate(plan, fast);
          ASSERT_TRUE(problems.empty()) << name(c.collective) << "/" << name(c.algorithm) << " p=" << p << " n=" << n
                                        << " channels=" << channels << " ranksPerNode=" << g << ": " << problems.front()
                                        << "\n"
                                        << dump(plan);
        }
      }
}

INSTANTIATE_TEST_SUITE_P(All, GeneratorTest, ::testing::ValuesIn(testing::kGeneratorCases),
                         [](const auto& info) { return testing::caseName(info.param); });

TEST(Generators, PlanSizeGrowsWithStepsNotBytes) {
  const Plan small = allReduceRing(8, 1000);
  const Plan big = allReduceRing(8, 1000000000);
  EXPECT_EQ(small.opCount(), big.opCount());
  EXPECT_EQ(small.opCount(), 8U * 4U * 7U);  // per rank: (send + recvReduce) + (send + recv), 7 steps each
}

TEST(Generators, RingMovesTheBandwidthOptimalVolume) {
  // Each rank sends 2(p-1)/p of the data: the ring's lower bound.
  const int p = 7;
  const std::int64_t n = 7000;
  const Plan plan = allReduceRing(p, n);
  for (int r = 0; r < p; ++r) {
    std::int64_t sent = 0;
    for (const Op& op : plan.ranks[r])
      if (op.kind == OpKind::Send) sent += op.count();
    EXPECT_EQ(sent, 2 * (p - 1) * n / p);
  }
}

TEST(Generators, HalvingDoublingUsesLogSteps) {
  const Plan plan = allReduceHalvingDoubling(16, 1 << 12);
  for (int r = 0; r < 16; ++r) EXPECT_EQ(plan.ranks[r].size(), 2U * 2U * 4U);  // 4 halving + 4 doubling steps
}

TEST(Generators, ChunksCoverTheRangeInOrder) {
  for (std::int64_t total : {0, 1, 5, 16, 17, 1000003})
    for (int n : {1, 2, 3, 7, 16}) {
      std::int64_t next = 0;
      for (int i = 0; i < n; ++i) {
        const Chunk c = chunkOf(total, n, i);
        EXPECT_EQ(c.offset, next);
        EXPECT_GE(c.count, total / n);
        EXPECT_LE(c.count, total / n + 1);
        next = c.offset + c.count;
      }
      EXPECT_EQ(next, total);
    }
}

TEST(BinaryTrees, EveryRankReachesTheRootAndDepthIsLogarithmic) {
  for (int n = 1; n <= 64; ++n)
    for (const BinaryTree& t : {inOrderTree(n), shiftedInOrderTree(n, 1), heapTree(n, n / 3)}) {
      int maxDepth = 0;
      for (int r = 0; r < n; ++r) {
        int depth = 0;
        for (int x = r; t.nodes[x].parent >= 0; x = t.nodes[x].parent) ASSERT_LE(++depth, n) << "cycle at n=" << n;
        maxDepth = std::max(maxDepth, depth);
      }
      EXPECT_LE(maxDepth, 2 * std::bit_width(static_cast<unsigned>(n)));
    }
}

TEST(BinaryTrees, DoubleTreeLeavesAreInteriorInTheOtherTree) {
  for (int n : {4, 8, 16, 32}) {
    const BinaryTree a = inOrderTree(n), b = shiftedInOrderTree(n, 1);
    int leafInBoth = 0;
    for (int r = 0; r < n; ++r) {
      auto leaf = [&](const BinaryTree& t) { return t.nodes[r].child[0] < 0 && t.nodes[r].child[1] < 0; };
      leafInBoth += leaf(a) && leaf(b);
    }
    EXPECT_LE(leafInBoth, 1) << "n=" << n;
  }
}

TEST(Dispatch, RejectsBadArguments) {
  EXPECT_THROW(makePlan(Collective::AllReduce, Algorithm::Ring, 0, 10), cclab::InvalidArgument);
  EXPECT_THROW(makePlan(Collective::AllReduce, Algorithm::Ring, 4, -1), cclab::InvalidArgument);
  EXPECT_THROW(makePlan(Collective::Broadcast, Algorithm::Chain, 4, 10, 4), cclab::InvalidArgument);
  EXPECT_THROW(makePlan(Collective::ReduceScatter, Algorithm::Tree, 4, 10), cclab::InvalidArgument);
  EXPECT_THROW(parseAlgorithm("rign"), cclab::InvalidArgument);
  EXPECT_EQ(parseAlgorithm("dbtree"), Algorithm::DoubleBinaryTree);
}

}  // namespace
}  // namespace cclab::plan
