// crossover() against sizes solved by hand: two straight lines, and recursive doubling against the ring
// on a fully connected topology, where the closed forms give the size in one line of algebra.
#include <gtest/gtest.h>

#include "collectives/core/errors.h"
#include "sim/crossover.h"
#include "sim/presets.h"
#include "sim/topology.h"
#include "tests/sim/uniform_topology.h"

namespace cclab::sim {
namespace {

TEST(Crossover, TwoLinesCrossWhereSolvedByHand) {
  // a = 2 + 0.5 n, b = 100 + 0.1 n: equal at n = 98 / 0.4 = 245, so 245 is the first size where a is
  // not faster, and 244 is still faster.
  auto a = [](Bytes n) { return 2 + 0.5 * static_cast<double>(n); };
  auto b = [](Bytes n) { return 100 + 0.1 * static_cast<double>(n); };
  EXPECT_EQ(crossover(a, b), Bytes{245});
  EXPECT_LT(a(244), b(244));
  // On multiples of 8 the answer is the next multiple of 8 at or above 245.
  EXPECT_EQ(crossover(a, b, {.minBytes = 8, .granularity = 8}), Bytes{248});
  // A crossover far up: a = 1e6 + n·1e-6 vs b = 2e6 + ... never within 16 GiB: none.
  auto c = [](Bytes n) { return 1.0 + 1e-12 * static_cast<double>(n); };
  auto d = [](Bytes n) { return 2.0 + 1e-13 * static_cast<double>(n); };
  EXPECT_EQ(crossover(c, d), std::nullopt);
  // Equal at n = 1 / (1e-12 - 1e-13) = 1.111e12 bytes with a wider range.
  EXPECT_EQ(crossover(c, d, {.maxBytes = Bytes{1} << 41}), Bytes{1111111111112});
  // b faster from the start: none.
  EXPECT_EQ(crossover(b, a), std::nullopt);
  EXPECT_THROW(crossover(a, b, {.minBytes = 8, .granularity = 0}), InvalidArgument);
}

TEST(Crossover, RecursiveDoublingAgainstRingOnFourFullyConnectedRanks) {
  // p = 4, α = 1.001 µs, 1 GB/s (β = 1e-3 µs/B), free compute, whole ops, n bytes:
  //   rd   = log2(4)·(α + nβ)          = 2α + 2e-3·n
  //   ring = 2(p-1)·(α + (n/4)β)        = 6α + 1.5e-3·n
  // equal at 4α = 0.5e-3·n: n = 8008 bytes. Searched on multiples of p·4 = 16 bytes (sizes the ring
  // splits evenly): 8000 is still faster, 8016 is the crossover.
  TopologySpec s = testing::uniformTopology(TopologyKind::FullyConnected, 4, 1.001, 1.0);
  const Topology topo(s);
  const Predictor p{.topo = topo, .model = Model::Analytic, .sliceBytes = kWholeOps, .elemSize = 4};
  EXPECT_EQ(allReduceCrossover(p, SimAlgorithm::RecursiveDoubling, SimAlgorithm::Ring), Bytes{8016});
  // With α = 2.001 µs: equal at n = 8α / 1e-3 = 16008, so 16016.
  s.classes["link"] = {2.001, 1.0};
  const Topology slower(s);
  const Predictor q{.topo = slower, .model = Model::Analytic, .sliceBytes = kWholeOps, .elemSize = 4};
  EXPECT_EQ(allReduceCrossover(q, SimAlgorithm::RecursiveDoubling, SimAlgorithm::Ring), Bytes{16016});
  // The ring is never faster than itself.
  EXPECT_EQ(allReduceCrossover(p, SimAlgorithm::Ring, SimAlgorithm::Ring), std::nullopt);
}

// Issue 32 #8: a crossover search predicts some 130 sizes; the α-β parameters, which do not depend on
// the size, are computed once per algorithm (Predictor::paramsMemo), not once per size: on main each
// prediction routed the whole pattern again, and `scale --nodes 1..65536` took minutes.
TEST(Crossover, ASearchRoutesEachAlgorithmsPatternOnce) {
  const Topology topo(resized(*findPreset("cluster"), 0, 2));
  const Predictor predict{.topo = topo, .model = Model::Analytic};
  (void)allReduceCrossover(predict, SimAlgorithm::Tree, SimAlgorithm::Ring);
  EXPECT_EQ(predict.paramsMemo->size(), 2u);  // tree and ring, whatever the number of sizes tried
  (void)allReduceCrossover(predict, SimAlgorithm::DoubleBinaryTree, SimAlgorithm::Ring);
  EXPECT_EQ(predict.paramsMemo->size(), 3u);
}

}  // namespace
}  // namespace cclab::sim
