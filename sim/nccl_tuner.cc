// NCCL's tuning model (nccl_tuner.h). Every table below is a constant of NVIDIA/nccl
// src/graph/tuning.cc (ncclTunerConstantsDefaults, nvlsEfficiency, treeCorrectionFactor, getNetOverhead)
// or src/graph/search.cc (the fastest channel speeds its search tries); our code arranges them by
// protocol in our order (LL, LL128, Simple).
#include "sim/nccl_tuner.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "collectives/core/errors.h"
#include "sim/effective_params.h"

namespace cclab::sim {
namespace {

using plan::Collective;
using Row = double[3];  // LL, LL128, Simple

int protoIndex(Protocol p) { return p == Protocol::LL ? 0 : p == Protocol::LL128 ? 1 : 2; }
int algoIndex(NcclAlgorithm a) { return static_cast<int>(a); }  // Tree, Ring, Nvls, NvlsTree

// tuning.cc, baseLatencies (µs): Tree, Ring, NVLS, NVLS tree.
constexpr Row kBaseLatency[4] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}};
// tuning.cc, hwLatencies (µs per step): [NVLink, PCI, network][Tree, Ring, NVLS, NVLS tree].
constexpr Row kHwLatency[3][4] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 25}, {0, 0, 25}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}},
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 20.9}},
};
enum Hw { kNvlink = 0, kPci = 1, kNet = 2 };
// Per architecture (Volta, Ampere, Hopper, Blackwell) x nodes (1, 2, more):
// llMaxBws (one node: by GPU; several: by CPU, row 0 = Intel), perChMaxRingLL128Bws,
// perChMaxTreeLL128Bws, perChMaxTreeBws, perChMaxNVLSTreeBws (GB/s).
constexpr double kLLMaxBw[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double kRingLL128PerCh[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}};
constexpr double kTreeLL128PerCh[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kTreePerCh[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
constexpr double kNvlsTreePerCh[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 80.0}};
// tuning.cc, nvlsEfficiency per architecture.
constexpr double kNvlsEfficiency[4] = {0, 0, 0.85, 0.74};
// tuning.cc, getNetOverhead: the proxy's post cost per network step on an Intel x86 host (µs; 2 on
// AMD); Simple pays it three times.
constexpr double kNetOverhead = 1.0;
// tuning.cc, treeCorrectionFactor [LL, LL128, Simple][log2(bytes / 64)], for 64 B .. 256 MiB.
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};
// search.cc: the fastest per-channel speed the search tries (GB/s): intra speedArrayIntra[0] (40),
// sm90SpeedArrayIntra[0] (60), sm100SpeedArrayIntra[0] (90); inter speedArrayInter[0] (48),
// sm90SpeedArrayInter[0] (48), sm100SpeedArrayInter[0] (96). NCCL allows at most 32 channels
// (MAXCHANNELS).
constexpr int kMaxChannels = 32;

int archIndex(int cc) { return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0; }
int log2i(std::int64_t v) { return v <= 0 ? -1 : std::bit_width(static_cast<std::uint64_t>(v)) - 1; }

GBps classBandwidth(const TopologySpec& s, const std::string& cls) {
  const LinkClass& c = s.classes.at(cls);
  return c.bandwidth * c.efficiency * s.protocolEfficiency;
}

}  // namespace

std::string_view name(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::Tree: return "tree";
    case NcclAlgorithm::Ring: return "ring";
    case NcclAlgorithm::Nvls: return "nvls";
    default: return "nvls-tree";
  }
}

// Our stand-in for NCCL's topology search: a ring's bus bandwidth is the channels' speeds summed, which
// the search keeps within the GPU's links (intra: its NVLink port or its PCIe path; inter: its node's
// NICs, each carrying whole channels). We take that sum as the bandwidth our topology gives, and cut it
// into channels of at most NCCL's fastest search speed, doubled as NCCL duplicates its channels; the
// channel count only matters where the model caps per channel (LL128, tree, NVLS).
NcclGraph ncclGraphOf(const Topology& topo, int nranks) {
  const TopologySpec& s = topo.spec();
  NcclGraph g;
  g.nranks = nranks;
  g.computeCapability = s.computeCapability;
  g.nvls = s.nvlsBandwidth > 0;
  g.ll128 = s.ll128Protocol;
  GBps intra = 0, inter = std::numeric_limits<double>::infinity();
  switch (s.kind) {
    case TopologyKind::Switch: intra = classBandwidth(s, "link"); break;
    case TopologyKind::Pcie:
      g.nvlink = false;
      intra = 1 / effectiveParams(topo, Collective::AllReduce, plan::Algorithm::Ring, nranks).beta;
      break;
    case TopologyKind::Cluster:
      g.nodes = (nranks + s.gpusPerNode - 1) / s.gpusPerNode;
      intra = classBandwidth(s, "intra");
      if (g.nodes > 1) inter = s.nicsPerNode * std::min(classBandwidth(s, "nic"), classBandwidth(s, "pcie"));
      break;
    default:
      throw InvalidArgument("--algo nccl: NCCL's model needs a GPU topology (kind switch, pcie or cluster; got '" +
                            std::string(name(s.kind)) + "')");
  }
  const bool sm90 = s.computeCapability >= 90, sm100 = s.computeCapability >= 100;
  const double topSpeed = g.nodes > 1 ? (sm100 ? 96.0 : 48.0) : (sm100 ? 90.0 : sm90 ? 60.0 : 40.0);
  const GBps total = std::min(intra, inter);
  g.channels = std::clamp(2 * static_cast<int>(std::ceil(total / topSpeed)), 2, kMaxChannels);
  g.bwIntra = g.bwInter = total / g.channels;
  return g;
}

std::vector<NcclEstimate> ncclEstimates(const NcclGraph& g, Collective c, Bytes bytes) {
  std::vector<NcclEstimate> out;
  if (g.nranks <= 1) return out;
  const int arch = archIndex(g.computeCapability);
  const int nodeIdx = g.nodes <= 2 ? g.nodes - 1 : 2;
  const double llMaxBw = kLLMaxBw[g.nodes == 1 ? arch : 0][nodeIdx];
  const double ppn = static_cast<double>(g.nranks) / g.nodes;
  const int intraHw = g.nvlink ? kNvlink : kPci;
  const bool allreduce = c == Collective::AllReduce;
  const bool rooted = c == Collective::Broadcast || c == Collective::Reduce;
  const int nsteps = allreduce ? 2 * (g.nranks - 1) : rooted ? g.nranks : g.nranks - 1;
  const int nInterSteps = g.nodes == 1 ? 0 : allreduce ? 2 * (g.nodes - 1) : g.nodes - 1;
  for (NcclAlgorithm a : {NcclAlgorithm::Tree, NcclAlgorithm::Ring, NcclAlgorithm::Nvls, NcclAlgorithm::NvlsTree}) {
    const bool nvlsLike = a == NcclAlgorithm::Nvls || a == NcclAlgorithm::NvlsTree;
    // Which algorithms a collective has (tuning.cc): allreduce all four; allgather and reduce-scatter
    // ring and NVLS; broadcast and reduce ring. NVLS needs the switch's reduction and two channels;
    // across nodes plain NVLS needs CollNet (not modelled), NVLS tree needs several nodes.
    if (a != NcclAlgorithm::Ring && rooted) continue;
    if (a == NcclAlgorithm::Tree && !allreduce) continue;
    if (a == NcclAlgorithm::NvlsTree && !allreduce) continue;
    if (nvlsLike && (!g.nvls || g.channels < 2 || kNvlsEfficiency[arch] == 0)) continue;
    if (a == NcclAlgorithm::Nvls && g.nodes > 1) continue;
    if (a == NcclAlgorithm::NvlsTree && g.nodes == 1) continue;
    for (Protocol p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
      if (nvlsLike && p != Protocol::Simple) continue;    // NVLS runs Simple only
      if (p == Protocol::LL128 && !g.ll128) continue;     // LL128: NVLink, sm_70+ (the enable rule)
      const int pi = protoIndex(p), ai = algoIndex(a);
      double bw = g.nodes <= 2 ? g.bwIntra : g.bwInter;
      if (nvlsLike) {
        double intraBw = g.bwIntra * kNvlsEfficiency[arch] * (g.channels - 1) / g.channels;
        intraBw *= allreduce ? 2.0 : (ppn - 1) / ppn;  // allreduce pipelines its two halves
        const double interBw = g.nodes == 1 ? std::numeric_limits<double>::infinity()
                                            : g.bwInter * (g.nodes <= 2 && a == NcclAlgorithm::NvlsTree ? 2 : 1);
        bw = std::min({intraBw, interBw, a == NcclAlgorithm::NvlsTree ? kNvlsTreePerCh[arch][nodeIdx] : intraBw});
      }
      double busBw = g.channels * bw;
      if (a == NcclAlgorithm::Ring && p == Protocol::LL) busBw = std::min(llMaxBw, busBw * .5);
      if (a == NcclAlgorithm::Ring && p == Protocol::LL128) busBw = std::min(busBw * .92, g.channels * kRingLL128PerCh[arch][nodeIdx]);
      if (a == NcclAlgorithm::Tree) busBw = std::min(busBw * .92, g.channels * kTreePerCh[arch][nodeIdx]);
      if (a == NcclAlgorithm::Tree && p == Protocol::LL) busBw = std::min(busBw / 3.8, llMaxBw);
      if (a == NcclAlgorithm::Tree && p == Protocol::LL128)
        busBw = std::min(busBw * (g.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), g.channels * kTreeLL128PerCh[arch][nodeIdx]);
      const double ratio = a == NcclAlgorithm::Tree ? .5 : static_cast<double>(g.nranks) / nsteps;
      NcclEstimate e{.algorithm = a, .protocol = p, .busBandwidth = busBw, .algBandwidth = busBw * ratio};
      // Latency (tuning.cc): base + per-step hardware latencies.
      double intraLat = kHwLatency[intraHw][ai][pi];
      const double interLat = ppn == 1 ? kHwLatency[kNet][algoIndex(NcclAlgorithm::Tree)][pi] : kHwLatency[kNet][ai][pi];
      double lat = kBaseLatency[ai][pi];
      if (a == NcclAlgorithm::Ring) {
        const int hw = g.nodes == 1 ? intraHw : kNet;
        if (rooted) {
          // Broadcast/reduce on channels that differ: a step latency per rank (Simple: the tree's).
          lat += nsteps * kHwLatency[hw][p == Protocol::Simple ? algoIndex(NcclAlgorithm::Tree) : ai][pi];
        } else {
          if (g.nodes > 1) intraLat = std::max(intraLat, kNetOverhead * (p == Protocol::Simple ? 3 : 1));
          lat += (nsteps - nInterSteps) * intraLat + nInterSteps * interLat;
        }
      } else if (a == NcclAlgorithm::Tree) {
        lat += 2 * ((g.nranks / g.nodes - 1) * intraLat + log2i(g.nodes) * interLat);
      } else if (a == NcclAlgorithm::Nvls) {
        lat = intraLat;
      } else {
        lat += intraLat + 2 * log2i(g.nodes) * interLat;
      }
      // ncclTopoGetAlgoTime's corrections: the tree's per-size factor, the multi-node ring's plateau.
      double algBw = e.algBandwidth;
      const int logSize = log2i(bytes >> 6);
      if (a == NcclAlgorithm::Tree && allreduce && logSize >= 0 && logSize < 23) algBw *= kTreeCorrection[pi][logSize];
      if (a == NcclAlgorithm::Ring && p == Protocol::Simple && g.nodes > 1 && allreduce &&
          bytes / (static_cast<std::int64_t>(g.channels) * g.nranks) >= 64)
        lat *= g.computeCapability < 80 ? 1.9 : 1.4;
      e.latency = lat;
      e.algBandwidth = algBw;
      if (algBw <= 0) continue;
      e.time = lat + static_cast<double>(bytes) / (1000 * algBw);
      out.push_back(e);
    }
  }
  return out;
}

NcclEstimate ncclPick(const NcclGraph& g, Collective c, Bytes bytes) {
  const auto all = ncclEstimates(g, c, bytes);
  if (all.empty()) throw InvalidArgument("--algo nccl: NCCL's model has no algorithm for this call (one rank?)");
  NcclEstimate best = all.front();
  for (const auto& e : all)
    if (e.time < best.time) best = e;
  return best;
}

}  // namespace cclab::sim
