// The simulator's algorithm table and the command-line values of cclab-sim (algorithms.h, cli_values.h).
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>

#include "collectives/core/errors.h"
#include "sim/algorithms.h"
#include "sim/cli_values.h"
#include "sim/measured.h"
#include "sim/topology.h"

namespace cclab::sim {
namespace {

TEST(Algorithms, OneTableGivesEveryNameAndTheErrorListsThemAll) {
  EXPECT_EQ(algorithmNames(), "ring, tree, flat-tree, dbtree, rhd, rd, chain, oneshot, twoshot, hier-ring, hier-tree, nvls");
  for (const auto& i : simAlgorithms()) {
    EXPECT_EQ(parseSimAlgorithm(i.name), i.id);
    EXPECT_EQ(name(i.id), i.name);
    if (!i.hierarchical && i.id != SimAlgorithm::Nvls) {  // nvls has no plan
      EXPECT_EQ(i.name, plan::name(i.planAlgorithm));
    }
  }
  try {
    parseSimAlgorithm("spiral");
    FAIL() << "spiral parsed";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(algorithmNames()), std::string::npos) << e.what();
  }
  EXPECT_THROW(parseSimAlgorithm("auto"), InvalidArgument);
  // hier-ring replays the plan plan::Algorithm::Hierarchical, and takes the plan's name too.
  EXPECT_EQ(parseSimAlgorithm("hier"), SimAlgorithm::HierarchicalRing);
  EXPECT_EQ(infoOf(SimAlgorithm::HierarchicalRing).planAlgorithm, plan::Algorithm::Hierarchical);
  EXPECT_FALSE(infoOf(SimAlgorithm::HierarchicalRing).analyticOnly);
  EXPECT_TRUE(infoOf(SimAlgorithm::HierarchicalTree).analyticOnly);
}

TEST(Algorithms, CheckRefusesWhatHasNoPlanOrNoCluster) {
  using plan::Collective;
  EXPECT_NO_THROW(checkAlgorithm(Collective::AllReduce, SimAlgorithm::RecursiveDoubling, false));
  EXPECT_THROW(checkAlgorithm(Collective::ReduceScatter, SimAlgorithm::Tree, false), InvalidArgument);
  EXPECT_THROW(checkAlgorithm(Collective::AllReduce, SimAlgorithm::HierarchicalRing, false), InvalidArgument);
  EXPECT_NO_THROW(checkAlgorithm(Collective::AllReduce, SimAlgorithm::HierarchicalTree, true));
  EXPECT_THROW(checkAlgorithm(Collective::Broadcast, SimAlgorithm::HierarchicalTree, true), InvalidArgument);
}

TEST(CliValues, RangesAndLists) {
  EXPECT_EQ(parseRange("1..8", "--nodes"), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(parseRange("3..20", "--nodes"), (std::vector<int>{3, 6, 12}));
  EXPECT_EQ(parseRange("1,5,7", "--nodes"), (std::vector<int>{1, 5, 7}));
  for (const char* bad : {"0", "0..4", "8..2", "x", "1..", "2,,-1", "99999999999", ",", "1..70000"})
    EXPECT_THROW(parseRange(bad, "--nodes"), InvalidArgument) << bad;
  EXPECT_EQ(splitList("a,,b,"), (std::vector<std::string>{"a", "b"}));
}

TEST(CliValues, StragglerFromFlagsOrFromTheSharedSyntax) {
  const Straggler old = stragglerOf("", 3, 2.5, 40, false);
  EXPECT_EQ(old.rank, 3);
  EXPECT_EQ(old.computeFactor, 2.5);
  EXPECT_EQ(old.linkFactor, 2.5);
  EXPECT_EQ(old.startDelay, std::chrono::microseconds(40));
  EXPECT_EQ(stragglerOf("", 1, 3, 0, true).linkFactor, 1.0);
  const Straggler bare = stragglerOf("2:1.5", 0, 9, 9, true);  // RANK:F slows compute and links
  EXPECT_EQ(bare.rank, 2);
  EXPECT_EQ(bare.computeFactor, 1.5);
  EXPECT_EQ(bare.linkFactor, 1.5);
  EXPECT_EQ(bare.startDelay.count(), 0);
  const Straggler keys = stragglerOf("4:delay=1ms,link=3", 0, 2, 0, false);
  EXPECT_EQ(keys.startDelay, std::chrono::milliseconds(1));
  EXPECT_EQ(keys.linkFactor, 3.0);
  EXPECT_EQ(keys.computeFactor, 1.0);
  EXPECT_THROW(stragglerOf("", -1, 2, 0, false), InvalidArgument);
  EXPECT_THROW(stragglerOf("", 1, 0.5, 0, false), InvalidArgument);
  EXPECT_THROW(stragglerOf("", 1, 2, -1, false), InvalidArgument);
  EXPECT_THROW(stragglerOf("", 1, 2, 1e18, false), InvalidArgument);
  EXPECT_THROW(stragglerOf("1:speed=2", 0, 2, 0, false), InvalidArgument);
}

TEST(CliValues, ExitCodes) {
  EXPECT_EQ(exitCodeFor(InvalidArgument("x")), 2);
  EXPECT_EQ(exitCodeFor(TopologyError("x")), 2);
  EXPECT_EQ(exitCodeFor(MeasuredError("x")), 2);
  EXPECT_EQ(exitCodeFor(std::invalid_argument("x")), 2);
  EXPECT_EQ(exitCodeFor(std::runtime_error("x")), 1);
  EXPECT_EQ(exitCodeFor(Error("x")), 1);
}

}  // namespace
}  // namespace cclab::sim
