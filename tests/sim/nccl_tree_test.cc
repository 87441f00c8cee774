// NCCL's tree and NIC-aware ring orders in the simulator: the tree on a cluster against its own
// first-principles bound (the busiest resource's bytes over its bandwidth), and the tree's closed form
// against its replay.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "sim/analytic.h"
#include "sim/effective_params.h"
#include "sim/predictor.h"
#include "sim/presets.h"
#include "sim/replay.h"
#include "sim/topology.h"

using namespace cclab;
using namespace cclab::sim;
using plan::Algorithm;
using plan::Collective;

namespace {

Topology cluster(int nodes, int gpus, int nics) {
  TopologySpec s = resized(*findPreset("cluster"), 0, nodes, gpus);
  s.nicsPerNode = nics;
  return Topology(s);
}

// The busiest resource's bytes over its bandwidth: no schedule of these bytes finishes sooner.
Micros boundOf(const ReplayResult& r, const Topology& topo) {
  Micros bound = 0;
  for (std::size_t i = 0; i < r.bytes.size(); ++i)
    if (const GBps bw = topo.resources()[i].bandwidth; bw > 0)
      bound = std::max(bound, static_cast<double>(r.bytes[i]) * inverseBandwidth(bw));
  return bound;
}

// The tree on two nodes against its bound, bandwidth-bound (1 GiB): at least kTreeBoundFraction of it
// on 8, 4 and 2 NICs per node (measured 0.997, 0.983, 0.992 with NCCL's tree chunks as auto slices,
// ncclTreeChunkElems; 0.93 on 4 NICs with the generic quarter-of-an-op slices, whose 4 MiB slices
// and one-block lag of the broadcast behind the reduction left the NICs idle at the start and the
// end). At 256 MiB the same runs give 0.989, 0.937, 0.968: the first chunk of every channel crosses
// the 7-hop chain of its node while all 8 channels share each GPU's port (7 x 8 x 512 KiB at the
// port's 423.5 GB/s, ~70 us before a NIC has data), a fill the bound does not count.
constexpr double kTreeBoundFraction = 0.95;

}  // namespace

TEST(NcclTreeSim, TwoNodesReachItsBoundAndNeverPassIt) {
  for (int nics : {8, 4, 2}) {
    const Topology topo = cluster(2, 8, nics);
    const Predictor predict{.topo = topo};
    const std::int64_t count = (std::int64_t{1} << 30) / 4;
    ReplayResult r;
    predict.predict(Collective::AllReduce, SimAlgorithm::Tree, 16, count, &r);
    const Micros bound = boundOf(r, topo);
    std::printf("nics %d: tree %.1f us, bound %.1f us, %.3f of it\n", nics, r.time, bound, bound / r.time);
    EXPECT_GE(r.time, bound);
    EXPECT_GE(bound / r.time, kTreeBoundFraction) << nics << " NICs per node";
  }
}

TEST(NcclTreeSim, MovesLessOverTheNetworkThanTheRingOnTwoNodes) {
  const Topology topo = cluster(2, 8, 8);
  const Predictor predict{.topo = topo};
  const std::int64_t count = (std::int64_t{64} << 20) / 4;
  auto nicBytes = [&](SimAlgorithm a) {
    ReplayResult r;
    predict.predict(Collective::AllReduce, a, 16, count, &r);
    Bytes b = 0;
    for (std::size_t i = 0; i < r.bytes.size(); ++i)
      if (topo.isNic(static_cast<int>(i))) b += r.bytes[i];
    return b;
  };
  EXPECT_LT(static_cast<double>(nicBytes(SimAlgorithm::Tree)), 0.6 * static_cast<double>(nicBytes(SimAlgorithm::Ring)));
}

// The closed form (analytic_tree.cc, ncclTreeAllReduce with effective_params' pattern of every
// channel's edges both ways) against the replay of the plan, on clusters of 8 GPUs with 8 or 4 NICs,
// bandwidth-bound sizes. On 1 and 2 nodes they agree within kAnalyticBand (measured: analytic/replay
// 0.94..1.10). From 3 nodes the replay is slower than the form (0.83..1.00 of it at 3..16 nodes: an
// interior head's NIC carries three flows each way, which the form's busiest-link share counts but
// not the pipeline stalls they cause), so there the test only asks the form not to exceed the replay.
constexpr double kAnalyticBand = 0.25;

TEST(NcclTreeSim, ClosedFormIsNearTheReplay) {
  for (int nics : {8, 4})
    for (int nodes : {1, 2, 3, 4, 8, 16})
      for (std::int64_t bytes : {std::int64_t{64} << 20, std::int64_t{256} << 20}) {
        const Topology topo = cluster(nodes, 8, nics);
        const int p = nodes * 8;
        const Predictor replayed{.topo = topo, .protocol = ProtocolChoice::Simple};
        const Predictor analytic{.topo = topo, .model = Model::Analytic, .protocol = ProtocolChoice::Simple};
        const Micros r = replayed(Collective::AllReduce, SimAlgorithm::Tree, p, bytes / 4);
        const Micros a = analytic(Collective::AllReduce, SimAlgorithm::Tree, p, bytes / 4);
        std::printf("nics %d nodes %2d %4lld MiB: replay %9.1f analytic %9.1f  a/r %.3f\n", nics, nodes,
                    static_cast<long long>(bytes >> 20), r, a, a / r);
        if (nodes <= 2)
          EXPECT_NEAR(a / r, 1.0, kAnalyticBand) << nodes << " nodes, " << nics << " NICs, " << bytes << " bytes";
        else
          EXPECT_LE(a, r) << nodes << " nodes, " << nics << " NICs, " << bytes << " bytes";
      }
}

// NCCL's tree chunk (src/enqueue.cc): one 512 KiB Simple step, halved while a channel has fewer than
// depth x 8, x 4, x 1 chunks (floors 128, 64, 32 KiB); depth = ranks per node - 1 + floor(log2 nodes).
TEST(NcclTreeSim, AutoSlicesAreNcclsTreeChunks) {
  constexpr std::int64_t KiB = 1024, MiB = 1024 * KiB;
  // 2 nodes x 8: depth 8. 256 MiB over 8 channels: 64 chunks of 512 KiB each, not fewer than 64.
  EXPECT_EQ(ncclTreeChunkElems(256 * MiB / 4, 4, 8, 16, 8), 512 * KiB / 4);
  // 128 MiB: 32 chunks < 64 -> 256 KiB (64 chunks): stops.
  EXPECT_EQ(ncclTreeChunkElems(128 * MiB / 4, 4, 8, 16, 8), 256 * KiB / 4);
  // 16 MiB: 2 MiB per channel -> 128 KiB (16 < 64, floor), then 64 KiB (16 < 32), 32 = 32: stops.
  EXPECT_EQ(ncclTreeChunkElems(16 * MiB / 4, 4, 8, 16, 8), 64 * KiB / 4);
  // 64 KiB: 8 KiB per channel -> down to the 32 KiB floor.
  EXPECT_EQ(ncclTreeChunkElems(64 * KiB / 4, 4, 8, 16, 8), 32 * KiB / 4);
  // 64 nodes x 8: depth 7 + 6 = 13; 1 GiB over 8 channels: 256 chunks >= 104: 512 KiB.
  EXPECT_EQ(ncclTreeChunkElems(1024 * MiB / 4, 4, 8, 512, 8), 512 * KiB / 4);
  // One node of 8 (depth 7), doubles: 8 MiB over 8 channels, 1 MiB each: 2 < 56 -> 128 KiB (8 < 56),
  // 64 KiB (16 < 28), 16 >= 7: stops.
  EXPECT_EQ(ncclTreeChunkElems(8 * MiB / 8, 8, 8, 8, 8), 64 * KiB / 8);
}
