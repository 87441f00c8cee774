// NCCL's topology dump (NCCL_TOPO_DUMP_FILE: the <system> tree NCCL detects, or a NCCL_TOPO_FILE in
// the same format) read into a cclab topology.
//
// The tree: <system version> holds <cpu numaid ...> (one per NUMA node), each holding <pci busid class
// link_speed link_width> elements nested as the PCIe switches are; a GPU is a <pci> holding
// <gpu dev sm rank> with <nvlink target count tclass> children (target: the PCI bus id at the other end,
// another GPU or an NVSwitch; a target that is no GPU of the dump is an NVSwitch); a NIC is a <pci>
// holding <nic> with one <net name dev speed port> per port (speed in Mb/s). Every attribute cclab does
// not read is ignored; an element it does not know, or a value it cannot read, is refused in one line
// naming the element and the attribute (TopologyError, exit 2).
//
// What it becomes (ncclTopology):
//  - GPUs on NVSwitches (every GPU's NVLinks reach a switch): one node is the `switch` kind (per-GPU
//    NVLink bandwidth = links x the generation's per-link rate); N nodes the `cluster` kind, K NICs per
//    node, each GPU on its nearest NIC (fewest PCIe hops; ties to the NIC with fewer GPUs, then the first),
//    GPUs renumbered so that GPU g uses NIC floor(g*K/G) as the cluster kind routes (K must divide G and
//    every NIC serve G/K GPUs). GPU-NIC class: the slower of the two PCIe links; NIC class: its speed.
//  - Anything else (PCIe only, NVLink between GPUs, mixed nodes): the `graph` kind, the dump's own tree
//    (CPU sockets joined by a socket link, PCIe links by generation and width, NVLinks between GPUs);
//    N nodes join through their NICs on one non-blocking fabric.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/topology.h"
#include "sim/units.h"

namespace cclab::sim {

struct NcclPciLink {
  double gtPerSecond = 0;  // link_speed's transfer rate
  int width = 0;           // lanes; 0: the dump says 0 (virtual machines do), read as 16
  [[nodiscard]] GBps bandwidth() const;
};

// A <pci> element or a <cpu> (busId "cpuN"); parent -1 for a CPU.
struct NcclDevice {
  std::string busId;
  int parent = -1;
  int cpu = 0;       // index of its CPU in NcclSystem::devices
  NcclPciLink link;  // to its parent (none for a CPU)
};

struct NcclNvLink {
  std::string target;  // PCI bus id of the other end, lower case
  int count = 0;
  bool toGpuClass = false;  // tclass 0x03xxxx (a display controller: a GPU), e.g. a GPU outside the dump
};

struct NcclGpu {
  int dev = 0, rank = -1, sm = 0;
  unsigned pciDevice = 0;  // PCI device id (0x2330 H100 SXM5 ...), 0 when not given
  int device = 0;          // its <pci> in NcclSystem::devices
  std::vector<NcclNvLink> nvlinks;
};

struct NcclNet {
  std::string name;
  int dev = 0;
  double speedMbps = 0;
  int device = 0;  // its NIC's <pci> in NcclSystem::devices
};

struct NcclSystem {
  std::string source;
  std::vector<NcclDevice> devices;  // CPUs and PCI elements, parents before children
  std::vector<NcclGpu> gpus;        // in dev order
  std::vector<NcclNet> nets;        // in document order
};

// Parses the text of a dump; `source` names it in errors ("nccl topology 'FILE': ...").
NcclSystem parseNcclSystem(const std::string& xml, const std::string& source);
// Reads a file through the one opener (collectives/core/input_file.h) and parses it.
NcclSystem loadNcclSystem(const std::string& path);

// What a node is, as ncclTopology reads it.
struct NcclNodeSummary {
  int gpus = 0;
  int sm = 0;                            // the GPUs' SM version (all must agree)
  bool nvswitch = false;                 // every GPU reaches an NVSwitch and no GPU links to a GPU
  GBps nvlinkPerGpu = 0;                 // NVLink bandwidth to the switch per GPU (0 without NVSwitch)
  int nvlinkPairs = 0;                   // GPU-GPU NVLink connections (each pair once)
  int nvlinksOutside = 0;                // NVLinks to GPUs the dump does not hold (left out)
  std::vector<std::vector<int>> gpusOfNic;  // per NIC (nets in document order), the GPUs (dev) that use it
  std::vector<GBps> nicBandwidth;        // per NIC, GB/s per direction
  GBps gpuNicPcie = 0;                   // slowest GPU-NIC PCIe link of the GPUs' NICs
  std::vector<int> rankOfGpu;            // cluster rank order: local rank of GPU dev i (identity off a cluster)
};
NcclNodeSummary summarize(const NcclSystem& s);

// The topology of `nodes` (one entry per node: several files, or one file repeated).
TopologySpec ncclTopology(const std::vector<NcclSystem>& nodes);

// `--topo` values naming NCCL dumps: a path ending in ".xml" (any case), or several joined by commas.
// The files of such a list; empty when no part ends in ".xml" (not a dump: a preset or a JSON file).
// Throws TopologyError when some part does (it is a list of dumps) but another is empty or is not .xml.
std::vector<std::string> ncclTopologyFiles(const std::string& arg);
// Returns the topology of `nodes` copies of one file (nodes 0 or 1: one), or of the listed files (then
// nodes must be 0 or their count); nothing when `arg` names no XML file. The rank count (nodes x GPUs)
// is checked against kMaxTopologyRanks before any node is copied.
std::optional<TopologySpec> resolveNcclTopology(const std::string& arg, int nodes);
bool isNcclTopologyArg(const std::string& arg);

// One line per node part: GPUs, SM, NVLink, NICs and which GPUs share each (cclab-sim topo --describe).
std::string describe(const NcclNodeSummary& s);

}  // namespace cclab::sim
