// NCCL's own cost model of a collective call, as its tuner evaluates it to pick an algorithm and a
// protocol (`cclab-sim allreduce --algo nccl`), so a user sees NCCL's choice and NCCL's predicted time
// beside our replay of the same choice.
//
// Source: NVIDIA/nccl src/graph/tuning.cc (ncclTopoTuneModel, ncclTopoGetAlgoTime): per algorithm and
// protocol a latency (base latency + per-step hardware latency x steps) and a bus bandwidth (channels x
// per-channel bandwidth, cut by per-protocol factors and per-channel caps), time = latency +
// bytes / algorithm bandwidth; the fastest enabled pair wins. The tables (base and hardware
// latencies, LL/LL128 caps, tree and NVLS factors, the tree correction factors) are NCCL's published
// constants, named where they are defined in nccl_tuner.cc; the code is ours.
//
// What NCCL reads from its topology search (graph bandwidths and channel counts) we derive from our
// topology, an approximation named in nccl_tuner.cc: a GPU's bandwidth (intra: its NVLink or PCIe
// link; inter: its node's NICs) split into channels of at most NCCL's fastest search speed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collectives/plan/plan.h"
#include "sim/protocol.h"
#include "sim/topology.h"
#include "sim/units.h"

namespace cclab::sim {

// NCCL's algorithms that apply to our topologies (CollNet needs a SHARP network and PAT one GPU per
// node: neither is modelled).
enum class NcclAlgorithm : std::uint8_t { Tree, Ring, Nvls, NvlsTree };
std::string_view name(NcclAlgorithm a);  // tree, ring, nvls, nvls-tree

// What NCCL's model says of one algorithm x protocol for a call.
struct NcclEstimate {
  NcclAlgorithm algorithm = NcclAlgorithm::Ring;
  Protocol protocol = Protocol::Simple;
  Micros latency = 0;  // the model's latency term
  GBps busBandwidth = 0;   // before the algorithm-bandwidth ratio
  GBps algBandwidth = 0;   // bytes / (time - latency), GB/s
  Micros time = 0;         // latency + bytes / algBandwidth (with NCCL's corrections)
};

// The graph NCCL's model starts from, derived from our topology (nccl_tuner.cc).
struct NcclGraph {
  int nranks = 1, nodes = 1;
  int computeCapability = 0;
  bool nvlink = true;        // typeIntra NVLink (else PCI)
  int channels = 1;          // ring/tree channels
  GBps bwIntra = 0;          // per channel
  GBps bwInter = 0;          // per channel (multi-node)
  bool nvls = false;         // the NVSwitch reduces (TopologySpec::nvlsBandwidth > 0)
  bool ll128 = false;        // LL128 enabled (TopologySpec::ll128Protocol)
};
// Throws InvalidArgument for a topology that is not a GPU topology (host, fully connected, graph).
NcclGraph ncclGraphOf(const Topology& topo, int nranks);

// Every enabled algorithm x protocol NCCL's model prices for the call (bytes as NCCL counts them: the
// whole vector for allreduce, broadcast, reduce; nranks x per-rank count for allgather and
// reduce-scatter), in NCCL's order; empty for one rank.
std::vector<NcclEstimate> ncclEstimates(const NcclGraph& g, plan::Collective c, Bytes bytes);
// The one NCCL runs: the lowest time (ties: the earlier in NCCL's order). Throws when none applies.
NcclEstimate ncclPick(const NcclGraph& g, plan::Collective c, Bytes bytes);

}  // namespace cclab::sim
