// NCCL's channel layout and tree as plans: NIC-aware ring orders (every channel enters and leaves a
// node through one NIC; channels spread over NICs for every NIC:GPU ratio), and the tree of a chain
// per node plus a double binary tree between nodes, on two concurrent lanes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "collectives/plan/interpret.h"
#include "collectives/plan/node_tree.h"
#include "collectives/plan/validate.h"

namespace cclab::plan {
namespace {

int nicOf(int rank, int g, int K) { return (rank % g) * K / g; }

// Per node and direction (0: leaving, 1: entering), how many channels of `plan` cross between nodes
// through each NIC; a channel counts once per NIC direction it uses.
std::map<std::pair<int, int>, std::vector<int>> nicLoads(const Plan& plan, int g, int K) {
  std::map<std::pair<int, int>, std::vector<std::set<int>>> users;
  for (int r = 0; r < plan.nranks; ++r)
    for (const Op& op : plan.ranks[static_cast<std::size_t>(r)]) {
      if (op.peer < 0 || op.peer / g == r / g) continue;
      auto& u = users[{r / g, op.kind == OpKind::Send ? 0 : 1}];
      u.resize(static_cast<std::size_t>(K));
      u[static_cast<std::size_t>(nicOf(r, g, K))].insert(op.channel);
    }
  std::map<std::pair<int, int>, std::vector<int>> loads;
  for (const auto& [key, u] : users)
    for (const auto& s : u) loads[key].push_back(static_cast<int>(s.size()));
  return loads;
}

// The property: with C channels and K NICs no NIC direction carries two channels while another of the
// node's NICs in that direction is idle, and no NIC direction carries more than ceil(C/K) (their
// loads differ by at most one).
TEST(NicLayout, RingChannelsSpreadOverNicsForEveryRatioAndChannelCount) {
  for (int g : {8, 16})
    for (int ratio : {1, 2, 4, 8}) {
      const int K = g / ratio;
      for (int nodes : {2, 3})
        for (int C : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 24, 32}) {
          const int p = nodes * g;
          const Plan plan = makePlan(Collective::AllReduce, Algorithm::Ring, p, std::int64_t{C} * p, 0,
                                     {.channels = C, .ranksPerNode = g, .nicsPerNode = K});
          const auto loads = nicLoads(plan, g, K);
          ASSERT_EQ(loads.size(), static_cast<std::size_t>(2 * nodes));
          for (const auto& [key, l] : loads) {
            const auto [lo, hi] = std::minmax_element(l.begin(), l.end());
            EXPECT_LE(*hi - *lo, 1) << "g=" << g << " K=" << K << " nodes=" << nodes << " C=" << C << " node "
                                    << key.first << (key.second ? " in" : " out");
            EXPECT_EQ(*hi, (C + K - 1) / K);
          }
          // With two or more GPUs per NIC each channel leaves every node through the NIC it entered by.
          if (ratio >= 2)
            for (int ch = 0; ch < C; ++ch) {
              const auto order = ringOrder(p, g, ch, K);
              for (int n = 0; n < nodes; ++n)
                EXPECT_EQ(nicOf(order[static_cast<std::size_t>(n * g)], g, K),
                          nicOf(order[static_cast<std::size_t>(n * g + g - 1)], g, K))
                    << "g=" << g << " K=" << K << " channel " << ch;
            }
        }
    }
}

TEST(NicLayout, OneNicPerGpuIsTheRotatedOrder) {
  // nicsPerNode 0 or = ranksPerNode: channel c enters a node at local rank c and leaves from c - 1.
  for (int ch = 0; ch < 8; ++ch) {
    const auto a = ringOrder(16, 4, ch), b = ringOrder(16, 4, ch, 4);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a[4], 4 + ch % 4);
    EXPECT_EQ(a[7], 4 + (ch + 3) % 4);
  }
}

TEST(NcclTree, ChainInEveryNodeHeadsOnTheChannelsNicAcrossNodes) {
  for (int g : {1, 2, 4, 8})
    for (int K : {1, 2, 4, 8}) {
      if (K > g) continue;
      for (int nodes : {1, 2, 3, 5, 8})
        for (int ch = 0; ch < 16; ++ch) {
          const int p = nodes * g;
          const NodeTree t = nodeTree(p, g, K, ch);
          int roots = 0;
          std::set<int> heads;
          for (int r = 0; r < p; ++r) {
            const int par = t.parent[static_cast<std::size_t>(r)];
            if (par < 0) {
              ++roots;
              EXPECT_EQ(r, t.root);
            }
            if (t.chain[static_cast<std::size_t>(r)] == 0) {
              heads.insert(r);
              if (g > 1) EXPECT_EQ(nicOf(r, g, K), ch % K) << "g=" << g << " K=" << K << " channel " << ch;
            } else {
              ASSERT_GE(par, 0);
              EXPECT_EQ(par / g, r / g);  // inside the node
              EXPECT_EQ(t.chain[static_cast<std::size_t>(par)], t.chain[static_cast<std::size_t>(r)] - 1);
            }
            if (par >= 0 && par / g != r / g) EXPECT_EQ(t.chain[static_cast<std::size_t>(par)], 0);
            int hops = 0;  // every rank reaches the root
            for (int x = r; x != t.root; x = t.parent[static_cast<std::size_t>(x)]) ASSERT_LT(++hops, p);
          }
          EXPECT_EQ(roots, 1);
          EXPECT_EQ(heads.size(), static_cast<std::size_t>(nodes));
        }
    }
}

TEST(NcclTree, TwoNodesMoveHalfWhatTheRingMovesOverTheNetwork) {
  constexpr int g = 8, K = 8, C = 8;
  const std::int64_t n = 1 << 16;
  auto crossing = [&](Algorithm a) {
    const Plan plan = makePlan(Collective::AllReduce, a, 2 * g, n, 0, {.channels = C, .ranksPerNode = g, .nicsPerNode = K});
    std::int64_t bytes = 0;
    for (int r = 0; r < g; ++r)  // what node 0 sends to node 1
      for (const Op& op : plan.ranks[static_cast<std::size_t>(r)])
        if (op.kind == OpKind::Send && op.peer >= g) bytes += op.count();
    return bytes;
  };
  EXPECT_EQ(crossing(Algorithm::Tree), n);                  // one tree's sum up, the other's result down
  EXPECT_EQ(crossing(Algorithm::Ring), 2 * n * (2 * g - 1) / (2 * g));  // 2(p-1)/p of the data
}

TEST(NcclTree, UpAndDownAreConcurrentLanesLinkedByDeps) {
  const Plan plan = makePlan(Collective::AllReduce, Algorithm::Tree, 8, 4 << 20, 0, {.channels = 2, .ranksPerNode = 4});
  EXPECT_EQ(plan.nchannels, 4);
  EXPECT_EQ(plan.nphases, kMaxTreeBlocks + 1);
  EXPECT_EQ(plan.deps.size(), static_cast<std::size_t>(2 * kMaxTreeBlocks));
  for (const PhaseDep& d : plan.deps) EXPECT_EQ(d.afterPhase, d.phase - 1);
  // Without the deps the two lanes write the same output with nothing ordering them.
  Plan broken = makePlan(Collective::AllReduce, Algorithm::Tree, 8, 1000, 0, {.channels = 1, .ranksPerNode = 4});
  broken.deps.clear();
  EXPECT_FALSE(validate(broken, {.symbolic = false}).empty());
}

// Valid (the symbolic check: every output element holds every rank's input once) and exact on
// integers, for 1, 2, 3, 5 nodes, node sizes 1..4, NIC counts, channels and random awkward counts.
TEST(NcclTree, ValidAndExactOverNodesNicsChannelsAndCounts) {
  std::mt19937 rng(21);
  for (int nodes : {1, 2, 3, 5})
    for (int g : {1, 2, 3, 4})
      for (int K : {0, 1, 2})
        for (int C : {1, 2, 3}) {
          if (K > g) continue;
          const int p = nodes * g;
          const std::int64_t n = std::uniform_int_distribution<std::int64_t>(1, 3000)(rng) * 2 + 1;
          const PlanShape shape{.channels = C, .ranksPerNode = g, .blocks = 1 + static_cast<int>(rng() % 3), .nicsPerNode = K};
          const Plan plan = makePlan(Collective::AllReduce, Algorithm::Tree, p, n, 0, shape);
          const auto problems = validate(plan, {.symbolic = n < 400, .sliceElems = {0, 7}});
          ASSERT_TRUE(problems.empty()) << "nodes=" << nodes << " g=" << g << " K=" << K << " C=" << C << " n=" << n
                                        << ": " << problems.front();
          std::vector<std::vector<std::int64_t>> in(static_cast<std::size_t>(p)), out(static_cast<std::size_t>(p));
          std::vector<RankBuffers<std::int64_t>> bufs;
          std::vector<std::int64_t> want(static_cast<std::size_t>(n), 0);
          for (int r = 0; r < p; ++r) {
            auto& x = in[static_cast<std::size_t>(r)];
            x.resize(static_cast<std::size_t>(n));
            for (auto& v : x) v = static_cast<std::int64_t>(rng() % 100000);
            for (std::int64_t i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] += x[static_cast<std::size_t>(i)];
            out[static_cast<std::size_t>(r)].assign(static_cast<std::size_t>(n), -1);
            bufs.push_back({x.data(), out[static_cast<std::size_t>(r)].data(), nullptr});
          }
          interpret<std::int64_t>(plan, bufs, [](std::int64_t a, std::int64_t b) { return a + b; }, {.sliceElems = 97});
          for (int r = 0; r < p; ++r) ASSERT_EQ(out[static_cast<std::size_t>(r)], want) << "rank " << r;
        }
}

}  // namespace
}  // namespace cclab::plan
