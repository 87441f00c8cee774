// The link model (sim/flow_network.h, docs/sim.md "Link model"): resources shared by concurrent flows,
// idle time used, and bandwidth-bound rings at their first-principles bound on generated clusters.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "collectives/plan/op_source.h"
#include "collectives/plan/plan.h"
#include "sim/flow_network.h"
#include "sim/replay.h"
#include "sim/topology.h"

using namespace cclab;
using namespace cclab::sim;

namespace {

constexpr LinkSharing kRules[] = {LinkSharing::EqualShare, LinkSharing::MaxMin};

plan::Plan sendPlan(int p, const std::vector<std::pair<int, int>>& pairs, std::int64_t count) {
  plan::Plan pl;
  pl.nranks = p;
  pl.count = count;
  pl.ranks.resize(static_cast<std::size_t>(p));
  for (auto [s, d] : pairs) {
    pl.ranks[s].push_back({plan::OpKind::Send, d, 0, {plan::Buf::Input, 0, count}, {}});
    pl.ranks[d].push_back({plan::OpKind::Recv, s, 0, {}, {plan::Buf::Output, 0, count}});
  }
  return pl;
}

TopologySpec switchOf(int p, Micros lat, GBps bw) {
  TopologySpec s;
  s.name = "sw";
  s.kind = TopologyKind::Switch;
  s.ranks = p;
  s.classes["link"] = {lat, bw};
  return s;
}

}  // namespace

// n flows of equal size on one resource (n = 2: each gets half): each moves at bandwidth / n and all
// end together at n times one flow's time alone; when one ends early the others speed up.
TEST(LinkSharing, FlowsOnOneLinkShareItEqually) {
  std::mt19937 rng(7);
  for (const LinkSharing rule : kRules)
    for (int trial = 0; trial < 50; ++trial) {
      const int n = 2 + static_cast<int>(rng() % 7);
      const MicrosPerByte beta = 1e-4 * (1 + static_cast<double>(rng() % 100));
      const std::vector<int> routes = {0, 1};  // a resource of the flow, and an unlimited one
      FlowNetwork net({beta, 0.0}, routes, rule);
      const double volume = 1000.0 * (1 + static_cast<double>(rng() % 1000));
      for (int f = 0; f < n; ++f) net.start(f, 0, 2, volume, 0.0);
      for (int f = 0; f < n; ++f) EXPECT_NEAR(net.rate(f), 1.0 / (beta * n), 1e-9 / (beta * n));
      for (int f = 0; f < n; ++f) {
        Micros when = 0;
        ASSERT_GE(net.finishNext(1e300, when), 0);
        EXPECT_NEAR(when, n * volume * beta, 1e-9 * n * volume * beta);
      }
      EXPECT_EQ(net.active(), 0);
      // A short flow and a long one: half each until the short ends, then the long one alone.
      FlowNetwork two({beta, 0.0}, routes, rule);
      two.start(0, 0, 2, volume, 0.0);
      two.start(1, 0, 2, 3 * volume, 0.0);
      Micros when = 0;
      EXPECT_EQ(two.finishNext(1e300, when), 0);
      EXPECT_NEAR(when, 2 * volume * beta, 1e-9 * volume * beta);
      EXPECT_NEAR(two.rate(1), 1.0 / beta, 1e-9 / beta);
      EXPECT_EQ(two.finishNext(1e300, when), 1);
      EXPECT_NEAR(when, 4 * volume * beta, 1e-9 * volume * beta);  // the link never idled
    }
}

// Two messages from ranks 0 and 1 into rank 2 on a switch: both arrive together, each at half the
// link's bandwidth (the replay, every sharing rule).
TEST(LinkSharing, TwoMessagesIntoOneRankEachGetHalf) {
  const Topology t(switchOf(3, 0.0, 10));
  for (const LinkSharing rule : kRules) {
    ReplayOptions o;
    o.sliceElems = -1;
    o.sharing = rule;
    const auto r = replay(sendPlan(3, {{0, 2}, {1, 2}}, 2500), t, o);  // 10 KB each at 10 GB/s: 1 µs alone
    EXPECT_NEAR(r.finish[2], 2.0, 1e-9);
    EXPECT_NEAR(r.finish[0], 0.0, 1e-12);
  }
}

// Rank 1 sends to rank 2, whose downlink is busy with rank 0's message, then to rank 3 (idle). The
// one-start booking held rank 1's uplink from when rank 2's downlink was free (its link idled until
// then) and put the message to rank 3 after it: rank 3 had its data at 3 µs. Shared links use that
// gap: all three messages move at once at half the bandwidth of their shared links, so rank 3 has its
// data at 2 µs.
TEST(LinkSharing, IdleGapIsUsed) {
  const Topology t(switchOf(4, 0.0, 10));
  for (const LinkSharing rule : kRules) {
    ReplayOptions o;
    o.sliceElems = -1;
    o.sharing = rule;
    const auto r = replay(sendPlan(4, {{0, 2}, {1, 2}, {1, 3}}, 2500), t, o);
    EXPECT_LE(r.finish[3], 2.0 + 1e-9);
    EXPECT_NEAR(r.time, 2.0, 1e-9);  // the busiest links (rank 1's uplink, rank 2's downlink) carry 2 µs
  }
}

// A bandwidth-bound ring allreduce (256 MiB, latency and compute negligible) on generated clusters:
// G = 8 GPUs per node, K NICs per node for NIC:GPU 1:1, 1:2, 1:4, 1:8, random bandwidths per class,
// 2..64 nodes (for every K 2 nodes and a count drawn from 3..63, and 64 nodes for one K drawn from
// the four: a fixed seed, and a 64-node replay per K would be most of the suite's time), one channel
// per GPU in NIC-aware orders (as Predictor::shape makes them). Its time never beats the busiest
// resource's bytes over its bandwidth and is within 5% of it.
TEST(LinkSharing, BandwidthBoundRingReachesItsBound) {
  std::mt19937 rng(11);
  auto pick = [&](double lo, double hi) { return lo + (hi - lo) * static_cast<double>(rng() % 1000) / 999.0; };
  const int ratios[] = {8, 4, 2, 1};
  const int widest = ratios[rng() % 4];
  for (const int K : ratios)
    for (const int nodes : {2, 3 + static_cast<int>(rng() % 61), K == widest ? 64 : 0}) {
      if (nodes == 0) continue;
      TopologySpec s;
      s.name = "generated";
      s.kind = TopologyKind::Cluster;
      s.nodes = nodes;
      s.gpusPerNode = 8;
      s.nicsPerNode = K;
      s.classes["intra"] = {1e-3, pick(100, 900)};
      s.classes["pcie"] = {1e-3, pick(20, 64)};
      s.classes["nic"] = {1e-3, pick(10, 100)};
      const Topology topo(s);
      const std::int64_t count = (256LL << 20) / 4;
      const auto ops = plan::makeOpSource(plan::Collective::AllReduce, plan::Algorithm::Ring, topo.nranks(), count, 0,
                                          plan::PlanShape{.channels = 8, .ranksPerNode = 8, .nicsPerNode = K});
      const ReplayResult r = replay(*ops, topo);
      double bound = 0;
      for (std::size_t id = 0; id < r.bytes.size(); ++id)
        bound = std::max(bound, static_cast<double>(r.bytes[id]) * inverseBandwidth(topo.resources()[id].bandwidth));
      const std::string what = "K=" + std::to_string(K) + " nodes=" + std::to_string(nodes);
      EXPECT_GE(r.time, bound * (1 - 1e-9)) << what;
      EXPECT_GE(bound / r.time, 0.95) << what;
      std::printf("# ring K=%d nodes=%2d: %.4f of its bound\n", K, nodes, bound / r.time);
    }
}

// EqualShare against exact max-min (its accuracy, docs/sim.md "Link model"): the allreduces of the
// presets' shapes on a 2-node cluster with 8 GPUs and 8, 4 or 1 NICs (8 channels, 64 MiB, every
// protocol the topology allows) predict the same time within 1%; the two replays' run times are printed.
TEST(LinkSharing, EqualShareMatchesMaxMinOnCollectives) {
  using plan::Algorithm;
  for (const int K : {8, 4, 1})
    for (const Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::DoubleBinaryTree, Algorithm::Hierarchical,
                              Algorithm::HalvingDoubling}) {
      TopologySpec s;
      s.name = "cluster";
      s.kind = TopologyKind::Cluster;
      s.nodes = 2;
      s.gpusPerNode = 8;
      s.nicsPerNode = K;
      s.llProtocol = true;
      s.classes["intra"] = {0.35, 450 * 256.0 / 272};
      s.classes["pcie"] = {0.5, 64 * 256.0 / 280};
      s.classes["nic"] = {1.0, 50 * 4096.0 / 4138};
      s.compute.reduceBandwidth = 3350;
      const Topology topo(s);
      const auto ops = plan::makeOpSource(plan::Collective::AllReduce, a, topo.nranks(), (64LL << 20) / 4, 0,
                                          plan::PlanShape{8, 8});
      Micros t[2];
      double seconds[2];
      for (int i = 0; i < 2; ++i) {
        ReplayOptions o;
        o.sharing = kRules[i];
        const auto begin = std::chrono::steady_clock::now();
        t[i] = replay(*ops, topo, o).time;
        seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      }
      const std::string what = std::string(plan::name(a)) + " K=" + std::to_string(K);
      EXPECT_NEAR(t[0], t[1], 0.01 * t[1]) << what;
      std::printf("# %-8s K=%d  equal-share %10.1f us (%.3f s)  max-min %10.1f us (%.3f s)\n", std::string(plan::name(a)).c_str(),
                  K, t[0], seconds[0], t[1], seconds[1]);
    }
}
