// Link-class efficiency, the LL/Simple protocols, start-up costs, plan shape from the topology
// (channels, ranks per node, each rank's own NIC) and hier on a cluster: each applied alike by the
// replay and the analytic model.
#include <gtest/gtest.h>

#include <string>

#include "sim/analytic.h"
#include "sim/effective_params.h"
#include "sim/predictor.h"
#include "sim/presets.h"
#include "sim/replay.h"
#include "sim/topology.h"
#include "sim/topology_json.h"

using namespace cclab;
using namespace cclab::sim;
using plan::Algorithm;
using plan::Collective;

namespace {

constexpr double kRel = 1e-9;

TopologySpec switchOf(int p, Micros latency, GBps bandwidth, double efficiency = 1.0) {
  TopologySpec s;
  s.name = "sw";
  s.kind = TopologyKind::Switch;
  s.ranks = p;
  s.classes["link"] = {latency, bandwidth, efficiency};
  return s;
}

Micros replayed(const plan::Plan& pl, const Topology& topo, std::int64_t slice = -1) {
  ReplayOptions o;
  o.sliceElems = slice;
  return replay(pl, topo, o).time;
}

Micros analytic(const Topology& topo, Algorithm a, int p, std::int64_t count, std::int64_t slice = -1) {
  return predictOn(topo, {Collective::AllReduce, a, p, count, 4, slice}).time;
}

// A 2-node cluster of 8 GPUs with one NIC per GPU, protocols and start-up off unless a test sets them.
TopologySpec plainCluster(int nodes) {
  TopologySpec s = resized(*findPreset("cluster"), 0, nodes, 8);
  s.llProtocol = false;
  s.ll128Protocol = false;
  s.compute.launchLatency = s.compute.proxyLatency = 0;
  return s;
}

}  // namespace

// Halving a class's efficiency doubles the bandwidth term, in replay and in the closed form.
TEST(LinkClass, HalvingTheEfficiencyDoublesTheBandwidthTerm) {
  const int p = 8;
  const std::int64_t count = 8 * 1024 * 64;
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::DoubleBinaryTree}) {
    const Topology full(switchOf(p, 0, 100, 1.0)), half(switchOf(p, 0, 100, 0.5));
    const auto pl = plan::makePlan(Collective::AllReduce, a, p, count);
    EXPECT_NEAR(replayed(pl, half), 2 * replayed(pl, full), kRel * replayed(pl, half)) << plan::name(a);
    EXPECT_NEAR(analytic(half, a, p, count), 2 * analytic(full, a, p, count), kRel * analytic(half, a, p, count)) << plan::name(a);
  }
  // And the ring's closed form is the replay (on a switch the trees' effective β counts a parent's
  // two children on its one port, a pessimism of effective_params.h, not of the efficiency).
  const Topology full(switchOf(p, 0, 100, 0.7));
  const auto ring = plan::allReduceRing(p, count);
  EXPECT_NEAR(replayed(ring, full), analytic(full, Algorithm::Ring, p, count), kRel * replayed(ring, full));
  // The resource carries the line rate times the class efficiency times the topology-wide factor.
  TopologySpec s = switchOf(2, 0, 100, 0.8);
  s.protocolEfficiency = 0.5;
  EXPECT_NEAR(Topology(s).resources()[0].bandwidth, 40, 1e-12);
}

// LL: one traversal at half the bandwidth; Simple: three traversals at full bandwidth; a call takes
// the faster for all its messages (sim/protocol.h), so a call of one message switches over where
// bytes·β = 2·latency.
TEST(LinkClass, SmallMessagesTakeLLAndLargeOnesSimple) {
  const Micros L = 1;  // per hop: 2 µs per message on a switch
  TopologySpec s = switchOf(2, L, 10);
  s.llProtocol = true;
  const Topology topo(s);
  const MicrosPerByte beta = inverseBandwidth(10);
  for (std::int64_t count : {std::int64_t{100}, std::int64_t{4000}, std::int64_t{5000}, std::int64_t{100000}}) {
    plan::Plan pl;
    pl.nranks = 2;
    pl.count = count;
    pl.ranks.resize(2);
    pl.ranks[0].push_back({plan::OpKind::Send, 1, 0, {plan::Buf::Input, 0, count}, {}});
    pl.ranks[1].push_back({plan::OpKind::Recv, 0, 0, {}, {plan::Buf::Output, 0, count}});
    const double n = static_cast<double>(count * 4);
    const Micros ll = 2 * L + n * beta / kLLEfficiency, simple = kSimpleLatencyTraversals * 2 * L + n * beta;
    EXPECT_NEAR(replayed(pl, topo), std::min(ll, simple), 1e-9) << count;
  }
  // The closed form takes the faster protocol for the whole call the same way.
  for (int p : {4, 8})
    for (std::int64_t count : {std::int64_t{64} * p, std::int64_t{1} << 22}) {
      TopologySpec sp = switchOf(p, L, 10);
      sp.llProtocol = true;
      const Topology t(sp);
      EXPECT_NEAR(replayed(plan::allReduceRing(p, count), t), analytic(t, Algorithm::Ring, p, count),
                  kRel * replayed(plan::allReduceRing(p, count), t))
          << p << " " << count;
    }
}

// Launch start-up is paid once per collective by every rank; the NIC proxy only where a message
// crosses a NIC (a cluster of two nodes, not one).
TEST(LinkClass, LaunchIsPaidOncePerCallAndTheProxyOncePerNetworkMessage) {
  const Micros launch = 7, proxy = 3;
  TopologySpec s = switchOf(8, 0.5, 100);
  const std::int64_t count = 8 * 4096;
  const Topology base(s);
  s.compute.launchLatency = launch;
  s.compute.proxyLatency = proxy;  // no NIC on a switch: never paid
  const Topology launched(s);
  for (Algorithm a : {Algorithm::Ring, Algorithm::DoubleBinaryTree, Algorithm::OneShot}) {
    const auto pl = plan::makePlan(Collective::AllReduce, a, 8, count);
    EXPECT_NEAR(replayed(pl, launched), replayed(pl, base) + launch, 1e-9) << plan::name(a);
    EXPECT_NEAR(analytic(launched, a, 8, count), analytic(base, a, 8, count) + launch, 1e-9) << plan::name(a);
  }
  for (int nodes : {1, 2}) {
    TopologySpec c = plainCluster(nodes);
    const Topology off(c);
    c.compute.launchLatency = launch;
    c.compute.proxyLatency = proxy;
    const Topology on(c);
    const int p = 8 * nodes;
    const auto pl = plan::makePlan(Collective::AllReduce, Algorithm::Ring, p, count);
    // The launch once per call; the proxy once per message that crosses a NIC. The ring's critical
    // path (one hop per step over 2(p-1) consecutive edges) crosses each of the two NIC edges twice:
    // 4 proxies in the replay; the closed form's α is the mean edge latency, 2/p of a proxy per step.
    EXPECT_NEAR(replayed(pl, on) - replayed(pl, off), launch + (nodes > 1 ? 4 * proxy : 0.0), 1e-9) << nodes;
    const Micros a0 = analytic(off, Algorithm::Ring, p, count), a1 = analytic(on, Algorithm::Ring, p, count);
    EXPECT_NEAR(a1 - a0, launch + (nodes > 1 ? 2.0 * (p - 1) * 2.0 / p * proxy : 0.0), 1e-9) << nodes;
  }
}

// The cluster routes rank r's inter-node traffic through its own NIC, both ways.
TEST(LinkClass, ClusterRanksUseTheirOwnNic) {
  const Topology t(plainCluster(3));
  for (int r = 0; r < t.nranks(); ++r)
    for (int d : {(r + 8) % 24, (r + 13) % 24}) {
      const Route route = t.route(r, d);
      ASSERT_EQ(route.resources.size(), 4U) << r << "->" << d;
      const std::string out = "rank" + std::to_string(r) + "->node" + std::to_string(r / 8) + ".nic" + std::to_string(r % 8);
      const std::string in = "node" + std::to_string(d / 8) + ".nic" + std::to_string(d % 8) + "->rank" + std::to_string(d);
      EXPECT_EQ(t.resources()[route.resources.front()].name, out);
      EXPECT_EQ(t.resources()[route.resources.back()].name, in);
    }
}

// Plans take their shape from the topology: one channel per GPU of a cluster node, so a ring leaves
// every node through every NIC; one channel leaves through one.
TEST(LinkClass, ClusterShapeKeepsEveryNicBusy) {
  const Topology t(plainCluster(2));
  EXPECT_EQ(t.ranksPerNode(), 8);
  EXPECT_EQ(t.channels(), 8);
  EXPECT_EQ(Topology(*findPreset("dgx-h100")).channels(), 1);
  EXPECT_EQ(Topology(*findPreset("dgx-h100")).ranksPerNode(), 0);
  EXPECT_EQ(Topology(plainCluster(1)).ranksPerNode(), 0);  // one node: nothing to split
  auto nicsUsed = [&](int channels) {
    Predictor predict{.topo = t, .model = Model::Replay, .channels = channels};
    ReplayResult r;
    predict(Collective::AllReduce, SimAlgorithm::Ring, t.nranks(), std::int64_t{1} << 22, &r);
    int used = 0, nics = 0;
    for (int id = 0; id < static_cast<int>(t.resources().size()); ++id)
      if (t.isNic(id)) {
        ++nics;
        used += r.bytes[static_cast<std::size_t>(id)] > 0;
      }
    EXPECT_EQ(nics, 32);
    return used;
  };
  EXPECT_EQ(nicsUsed(0), 32);  // the topology's 8 channels
  EXPECT_EQ(nicsUsed(1), 4);   // one ring: node 0 out and in through one NIC each, node 1 the same
  // The analytic ring sees the same: with 8 channels each carries 1/8 of the data and its NIC hop is
  // one of 8, so the cost per byte of the whole vector (β/C) is far below one channel's (one NIC's).
  const CostParams one = effectiveParams(t, Collective::AllReduce, Algorithm::Ring, 16, {1, 8});
  const CostParams eight = effectiveParams(t, Collective::AllReduce, Algorithm::Ring, 16, {8, 8});
  EXPECT_LT(eight.beta / 8, one.beta / 4);
}

// hier-ring replays the hier plan; on a cluster (NVLink inside, one NIC per GPU across) it equals its
// closed form with the cluster's intra and inter parameters, start-up included; with the protocols on,
// under forced LL, forced Simple and auto alike (one protocol per call, sim/protocol.h). With one block
// at the cluster's γ; pipelined (B = 4 blocks) with free reduction, because the closed form does not
// count the node and network lanes' reductions taking turns at the rank's compute (docs/sim.md).
TEST(LinkClass, HierOnAClusterEqualsItsClosedForm) {
  int single = 0, pipelined = 0;
  for (int nodes : {2, 3, 4})
    for (bool ll : {false, true})
      for (ProtocolChoice choice : {ProtocolChoice::Auto, ProtocolChoice::LL, ProtocolChoice::Simple})
        for (std::int64_t count : {std::int64_t{8} * nodes * 1024, std::int64_t{8} * nodes * 4096, std::int64_t{8} * nodes * 262144}) {
        if (!ll && choice != ProtocolChoice::Auto) continue;  // forced needs ll_protocol
        TopologySpec s = plainCluster(nodes);
        s.llProtocol = ll;
        s.compute.launchLatency = 2;
        s.compute.proxyLatency = 1;
        const int blocks = plan::hierarchicalBlocks(count, 8, nodes);
        ++(blocks > 1 ? pipelined : single);
        if (blocks > 1) s.compute.reduceBandwidth = 0;
        const Topology t(s);
        {
          const Predictor replayP{.topo = t, .model = Model::Replay, .sliceBytes = kWholeOps, .channels = 1, .protocol = choice};
          const Predictor analyticP{.topo = t, .model = Model::Analytic, .sliceBytes = kWholeOps, .channels = 1, .protocol = choice};
          const Prediction r = replayP.predict(Collective::AllReduce, SimAlgorithm::HierarchicalRing, t.nranks(), count);
          const Prediction a = analyticP.predict(Collective::AllReduce, SimAlgorithm::HierarchicalRing, t.nranks(), count);
          EXPECT_NEAR(r.time, a.time, kRel * r.time) << nodes << " " << ll << " " << name(choice) << " " << count;
          EXPECT_EQ(r.protocol, a.protocol) << nodes << " " << ll << " " << name(choice) << " " << count;
        }
      }
  EXPECT_GT(single, 0);
  EXPECT_GT(pipelined, 0);
}

// The new topology fields round-trip through JSON and bad values are refused naming the field.
TEST(LinkClass, TopologyFieldsRoundTripAndAreChecked) {
  TopologySpec s = *findPreset("cluster");
  s.channels = 4;
  EXPECT_EQ(parseTopology(toJson(s)), s);
  EXPECT_EQ(Topology(s).channels(), 4);
  auto refused = [](nlohmann::json j, const std::string& field) {
    try {
      parseTopology(j);
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const TopologyError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  nlohmann::json j = toJson(*findPreset("dgx-h100"));
  j["classes"]["link"]["efficiency"] = 1.5;
  refused(j, "classes.link.efficiency");
  j = toJson(*findPreset("dgx-h100"));
  j["ll_protocol"] = "yes";
  refused(j, "ll_protocol");
  j = toJson(*findPreset("dgx-h100"));
  j["channels"] = 65;
  refused(j, "channels");
  j = toJson(*findPreset("dgx-h100"));
  j["compute"]["launch_us"] = -1;
  refused(j, "compute.launch_us");
}
