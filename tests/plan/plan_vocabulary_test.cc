// The small shared pieces of collectives/plan: the slice walker every consumer uses (checked against
// an order written out by hand), the fold of rd/rhd, isRooted/reduces, generatedAlgorithm, and the
// typed errors of makePlan/parseAlgorithm.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/plan/fold.h"
#include "collectives/plan/plan.h"
#include "collectives/plan/slice_walk.h"

namespace cclab::plan {
namespace {

Op opOf(std::int64_t count, int phase) { return {OpKind::Copy, -1, phase, {Buf::Input, 0, count}, {Buf::Output, 0, count}}; }

using Visit = std::tuple<std::size_t, std::int64_t, std::int64_t, std::int64_t>;  // op, slice, lo, hi

std::vector<Visit> walk(const std::vector<Op>& ops, std::int64_t slice) {
  std::vector<Visit> out;
  for (SliceCursor c(ops, slice); !c.done(); c.advance())
    out.emplace_back(c.opIndex(), c.sliceIndex(), c.sliceRange().first, c.sliceRange().second);
  return out;
}

TEST(SliceWalker, SliceMajorInsideAPhaseSkippingFinishedAndEmptyOps) {
  // phase 0: ops of 5, 0, 2 elements; phase 1: one op of 3; slices of 2 elements.
  const std::vector<Op> ops{opOf(5, 0), opOf(0, 0), opOf(2, 0), opOf(3, 1)};
  const std::vector<Visit> expected{{0, 0, 0, 2}, {2, 0, 0, 2}, {0, 1, 2, 4}, {0, 2, 4, 5}, {3, 0, 0, 2}, {3, 1, 2, 3}};
  EXPECT_EQ(walk(ops, 2), expected);
  const std::vector<Visit> whole{{0, 0, 0, 5}, {2, 0, 0, 2}, {3, 0, 0, 3}};
  EXPECT_EQ(walk(ops, 0), whole);
  EXPECT_TRUE(walk({}, 4).empty());
}

// Any Step with count() and phase walks the same way as the Op it stands for (replay's compiled ops).
struct Compiled {
  std::int64_t n = 0;
  int phase = 0;
  [[nodiscard]] std::int64_t count() const { return n; }
};

TEST(SliceWalker, CompiledStepsWalkLikeOpsOnRandomPlans) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Op> ops;
    std::vector<Compiled> steps;
    int phase = 0;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      phase += static_cast<int>(rng() % 3 == 0);
      const auto count = static_cast<std::int64_t>(rng() % 17);
      ops.push_back(opOf(count, phase));
      steps.push_back({count, phase});
    }
    const std::int64_t slice = static_cast<std::int64_t>(rng() % 6) - 1;
    std::vector<Visit> viaSteps;
    for (SliceWalker<Compiled> c(steps, slice); !c.done(); c.advance())
      viaSteps.emplace_back(c.opIndex(), c.sliceIndex(), c.sliceRange().first, c.sliceRange().second);
    EXPECT_EQ(viaSteps, walk(ops, slice)) << "trial " << trial;
    std::int64_t visits = 0;
    for (const auto& op : ops) visits += sliceCount(op.count(), slice);
    EXPECT_EQ(static_cast<std::int64_t>(viaSteps.size()), visits) << "trial " << trial;
  }
}

TEST(Fold, PairsTheExtraRanksAndNumbersTheRest) {
  for (int p = 1; p <= 40; ++p) {
    const Fold f(p);
    int q = 1;
    while (q * 2 <= p) q *= 2;
    ASSERT_EQ(f.powerOfTwo(), q);
    ASSERT_EQ(1 << f.log2(), q);
    std::set<int> virtualIds;
    int extras = 0;
    for (int r = 0; r < p; ++r) {
      if (f.isExtra(r)) {
        ++extras;
        EXPECT_TRUE(f.folds(r - 1)) << "p=" << p << " r=" << r;
        continue;
      }
      const int v = f.virtualRank(r);
      EXPECT_EQ(f.rankOf(v), r) << "p=" << p << " r=" << r;
      virtualIds.insert(v);
    }
    EXPECT_EQ(extras, p - q) << "p=" << p;
    EXPECT_EQ(static_cast<int>(virtualIds.size()), q);
    EXPECT_EQ(*virtualIds.begin(), 0);
    EXPECT_EQ(*virtualIds.rbegin(), q - 1);
  }
}

TEST(Vocabulary, RootedAndReducingCollectives) {
  EXPECT_TRUE(isRooted(Collective::Broadcast));
  EXPECT_TRUE(isRooted(Collective::Reduce));
  EXPECT_FALSE(isRooted(Collective::AllReduce));
  EXPECT_FALSE(isRooted(Collective::ReduceScatter));
  EXPECT_FALSE(isRooted(Collective::AllGather));
  EXPECT_TRUE(reduces(Collective::AllReduce));
  EXPECT_TRUE(reduces(Collective::ReduceScatter));
  EXPECT_TRUE(reduces(Collective::Reduce));
  EXPECT_FALSE(reduces(Collective::AllGather));
  EXPECT_FALSE(reduces(Collective::Broadcast));
}

TEST(Vocabulary, GeneratedAlgorithmIsThePlansOwn) {
  for (Collective c : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather, Collective::Broadcast,
                       Collective::Reduce})
    for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::DoubleBinaryTree, Algorithm::HalvingDoubling,
                        Algorithm::RecursiveDoubling, Algorithm::Chain}) {
      if (!hasGenerator(c, a)) continue;
      EXPECT_EQ(generatedAlgorithm(c, a), makePlan(c, a, 5, 7, 2).algorithm) << name(c) << "/" << name(a);
    }
  EXPECT_EQ(generatedAlgorithm(Collective::Broadcast, Algorithm::DoubleBinaryTree), Algorithm::Tree);
  EXPECT_EQ(generatedAlgorithm(Collective::AllReduce, Algorithm::DoubleBinaryTree), Algorithm::DoubleBinaryTree);
}

TEST(Vocabulary, ErrorsAreTyped) {
  EXPECT_THROW(parseCollective("allreduse"), cclab::InvalidArgument);
  EXPECT_THROW(makePlan(Collective::AllReduce, Algorithm::Auto, 4, 8), cclab::InvalidArgument);
}

}  // namespace
}  // namespace cclab::plan
