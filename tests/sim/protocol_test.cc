// One protocol per collective call (sim/protocol.h): auto is the faster of the forced LL and Simple,
// in the replay and in the closed forms alike; a call whose messages are each small enough for LL on
// an idle route still takes Simple when its channels share a NIC and Simple finishes it sooner.
#include <gtest/gtest.h>

#include <limits>
#include <map>

#include <string>

#include "collectives/core/errors.h"
#include "sim/effective_params.h"
#include "sim/predictor.h"
#include "sim/presets.h"
#include "sim/protocol.h"
#include "sim/replay.h"
#include "sim/topology.h"

using namespace cclab;
using namespace cclab::sim;
using plan::Collective;

namespace {

struct Case {
  std::string preset;
  int nodes;  // cluster only
  SimAlgorithm algo;
};

Topology topologyOf(const Case& c) {
  TopologySpec s = *findPreset(c.preset);
  if (s.kind == TopologyKind::Cluster) s = resized(s, 0, c.nodes, 8);
  return Topology(s);
}

std::string label(const Case& c, Model m, Bytes size) {
  return c.preset + "/" + std::to_string(c.nodes) + " " + std::string(name(c.algo)) + " " + std::string(name(m)) + " " +
         std::to_string(size);
}

// A 2-node cluster whose 8 GPUs per node share one NIC: all 8 ring channels cross it.
TopologySpec oneNicCluster() {
  TopologySpec s = resized(*findPreset("cluster"), 0, 2, 8);
  s.name = "cluster-1nic";
  s.nicsPerNode = 1;
  s.ll128Protocol = false;  // the LL-vs-Simple question on its own (LL128: tests/sim/nccl_test.cc)
  return s;
}

}  // namespace

TEST(Protocol, ChoicesParseAndForcedOnesNeedATopologyWithProtocols) {
  EXPECT_EQ(parseProtocolChoice("auto"), ProtocolChoice::Auto);
  EXPECT_EQ(parseProtocolChoice("ll"), ProtocolChoice::LL);
  EXPECT_EQ(parseProtocolChoice("simple"), ProtocolChoice::Simple);
  EXPECT_THROW(parseProtocolChoice("LL64"), InvalidArgument);
  const TopologySpec host = *findPreset("host");  // ll_protocol false
  EXPECT_EQ(protocolCandidates(host, ProtocolChoice::Auto), std::vector<Protocol>{Protocol::None});
  EXPECT_THROW(protocolCandidates(host, ProtocolChoice::LL), InvalidArgument);
  EXPECT_THROW(protocolCandidates(host, ProtocolChoice::Simple), InvalidArgument);
  const TopologySpec dgx = *findPreset("dgx-h100");
  EXPECT_EQ(protocolCandidates(dgx, ProtocolChoice::Auto),
            (std::vector<Protocol>{Protocol::Simple, Protocol::LL128, Protocol::LL}));
  EXPECT_EQ(parseProtocolChoice("ll128"), ProtocolChoice::LL128);
  // PCIe: NCCL runs no LL128 there; a forced one is refused, auto never tries it.
  const TopologySpec pcie = *findPreset("pcie");
  EXPECT_EQ(protocolCandidates(pcie, ProtocolChoice::Auto), (std::vector<Protocol>{Protocol::Simple, Protocol::LL}));
  EXPECT_THROW(protocolCandidates(pcie, ProtocolChoice::LL128), InvalidArgument);
  // An algorithm NCCL runs with Simple only (NVLS): auto tries Simple alone, a forced LL or LL128 is refused.
  EXPECT_EQ(protocolCandidates(dgx, ProtocolChoice::Auto, kNvlsProtocols), std::vector<Protocol>{Protocol::Simple});
  EXPECT_THROW(protocolCandidates(dgx, ProtocolChoice::LL, kNvlsProtocols), InvalidArgument);
  EXPECT_THROW(protocolCandidates(dgx, ProtocolChoice::LL128, kNvlsProtocols), InvalidArgument);
  EXPECT_EQ(protocolCandidates(dgx, ProtocolChoice::LL), std::vector<Protocol>{Protocol::LL});
  // Without protocols the replay reports None and a forced one is refused.
  const Topology t(host);
  const auto pl = plan::allReduceRing(2, 1024);
  EXPECT_EQ(replay(pl, t).protocol, Protocol::None);
  EXPECT_THROW(replay(pl, t, {.protocol = ProtocolChoice::LL}), InvalidArgument);
}

// Auto predicts exactly the lower of the two forced predictions, with that protocol, by replay and by
// the closed forms, on every GPU preset, for sizes where each protocol wins somewhere.
TEST(Protocol, AutoIsNeverSlowerThanEitherForcedProtocol) {
  const Case cases[] = {{"dgx-h100", 0, SimAlgorithm::Ring},        {"dgx-h100", 0, SimAlgorithm::DoubleBinaryTree},
                        {"dgx-h100", 0, SimAlgorithm::OneShot},     {"pcie", 0, SimAlgorithm::Ring},
                        {"pcie", 0, SimAlgorithm::HalvingDoubling}, {"cluster", 2, SimAlgorithm::Ring},
                        {"cluster", 2, SimAlgorithm::DoubleBinaryTree}, {"cluster", 2, SimAlgorithm::HierarchicalRing},
                        {"cluster", 3, SimAlgorithm::HierarchicalRing}};
  std::map<Protocol, int> wins;
  for (const Case& c : cases) {
    const Topology topo = topologyOf(c);
    for (Model m : {Model::Replay, Model::Analytic})
      for (Bytes size : {Bytes{12} << 10, Bytes{384} << 10, Bytes{24} << 20}) {
        Predictor p{.topo = topo, .model = m};
        const std::int64_t count = size / 4;
        const Prediction autoP = p.predict(Collective::AllReduce, c.algo, topo.nranks(), count);
        const std::string what = label(c, m, size);
        Prediction best{std::numeric_limits<Micros>::infinity(), Protocol::None};
        for (Protocol pr : protocolCandidates(topo.spec(), ProtocolChoice::Auto)) {  // Simple first: ties go to it
          p.protocol = pr == Protocol::LL ? ProtocolChoice::LL : pr == Protocol::LL128 ? ProtocolChoice::LL128 : ProtocolChoice::Simple;
          const Prediction forced = p.predict(Collective::AllReduce, c.algo, topo.nranks(), count);
          EXPECT_EQ(forced.protocol, pr) << what;
          EXPECT_LE(autoP.time, forced.time) << what;
          if (forced.time < best.time) best = forced;
        }
        EXPECT_EQ(autoP.time, best.time) << what;  // the same computation, bit for bit
        EXPECT_EQ(autoP.protocol, best.protocol) << what;
        wins[autoP.protocol]++;
      }
  }
  EXPECT_GT(wins[Protocol::LL], 0);
  EXPECT_GT(wins[Protocol::LL128], 0);
  EXPECT_GT(wins[Protocol::Simple], 0);
}

// The replay's auto runs both protocols side by side and abandons the loser once it passes the
// winner's finish: where one protocol is far slower, auto runs fewer op-slices than the two forced
// runs together, whichever wins, and reports the winner's own run.
TEST(Protocol, ReplayAbandonsTheLosingRun) {
  TopologySpec spec = *findPreset("dgx-h100");
  spec.ll128Protocol = false;  // two runs (with LL128, three: the same rule)
  const Topology topo(spec);
  for (std::int64_t count : {std::int64_t{1} << 24, std::int64_t{1024}}) {  // 64 MiB: Simple; 4 KiB: LL
    const auto pl = plan::allReduceRing(8, count);
    const ReplayResult a = replay(pl, topo), s = replay(pl, topo, {.protocol = ProtocolChoice::Simple}),
                       l = replay(pl, topo, {.protocol = ProtocolChoice::LL});
    const ReplayResult& winner = s.time <= l.time ? s : l;
    EXPECT_EQ(a.protocol, count > 1024 ? Protocol::Simple : Protocol::LL) << count;
    EXPECT_EQ(a.protocol, winner.protocol) << count;
    EXPECT_EQ(a.time, winner.time) << count;
    EXPECT_EQ(a.steps, winner.steps) << count;
    EXPECT_EQ(a.busy, winner.busy) << count;  // the reported details are the winner's run
    EXPECT_GT(a.stepsAllRuns, winner.steps) << count;
    EXPECT_LT(a.stepsAllRuns, s.steps + l.steps) << count;
  }
}

// 8 ring channels per node share one NIC. Every message is small enough that LL would deliver it
// sooner on an idle route (the per-message rule the replay had before, which therefore ran all of
// them on LL: the forced-LL time), yet LL holds the shared NIC twice as long; the call-level choice
// takes Simple and finishes far sooner. hier (8 channels, every GPU's network ring on the one NIC)
// the same, and its closed form agrees.
TEST(Protocol, ChannelsSharingANicTakeSimpleWhereEachMessageAloneWouldTakeLL) {
  const Topology topo(oneNicCluster());
  ASSERT_EQ(topo.channels(), 8);
  const int p = topo.nranks();
  const Bytes size = Bytes{4} << 20;
  for (SimAlgorithm a : {SimAlgorithm::Ring, SimAlgorithm::HierarchicalRing}) {
    // The largest message: a ring chunk (size / (C·p)), or a hier shard of a block (size / (C·B·G)); both
    // below the 512 KiB least auto slice, so whole ops.
    const int blocks = plan::hierarchicalBlocks(size / 4 / 8, 8, p / 8);
    const Bytes largest = a == SimAlgorithm::Ring ? size / (8 * p) : size / (8 * blocks * 8);
    for (const auto& [src, dst] : {std::pair{0, 8}, std::pair{0, 1}}) {  // across the NIC, inside the node
      const Route r = topo.route(src, dst);
      const double beta = inverseBandwidth(r.bottleneck);
      const Micros llAlone = r.latency + static_cast<double>(largest) * beta / kLLEfficiency;
      const Micros simpleAlone = kSimpleLatencyTraversals * r.latency + static_cast<double>(largest) * beta;
      EXPECT_LT(llAlone, simpleAlone) << name(a) << " " << src << "->" << dst;
    }
    Predictor pr{.topo = topo, .model = Model::Replay};
    const Prediction autoP = pr.predict(Collective::AllReduce, a, p, size / 4);
    pr.protocol = ProtocolChoice::LL;
    const Prediction ll = pr.predict(Collective::AllReduce, a, p, size / 4);
    EXPECT_EQ(autoP.protocol, Protocol::Simple) << name(a);
    EXPECT_LT(1.4 * autoP.time, ll.time) << name(a);  // observed 1.89x (ring), 1.54x (hier, one block here)
  }
  const Predictor an{.topo = topo, .model = Model::Analytic};
  EXPECT_EQ(an.predict(Collective::AllReduce, SimAlgorithm::HierarchicalRing, p, size / 4).protocol, Protocol::Simple);
}
