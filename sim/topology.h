// Topologies: what the replay runs a plan on.
//
// A TopologySpec is what a file or preset says (a kind, a rank count, named parameter classes); a
// Topology is that spec expanded into a graph of nodes (ranks, switches, NICs, memory) joined by
// full-duplex links. Every link direction, and every node with a finite capacity (a switch backplane,
// the memory bus of the host backend), is a *resource*: it has a latency and a bandwidth, and the
// replay serialises the messages that cross it. Routes are shortest paths in hops (ties go to the
// link listed first), never through a rank.
//
// Kinds (see docs/sim.md for the file schema):
//   switch           N ranks on one switch, class "link" (e.g. NVSwitch: 450 GB/s per GPU per direction)
//   fully_connected  a direct link between every pair of ranks, class "link" (the textbook α-β model)
//   pcie             N GPUs, `gpus_per_switch` per PCIe switch, switches on one root complex ("cpu"):
//                    classes "pcie" (GPU-switch) and "uplink" (switch-cpu, shared by its GPUs)
//   cluster          `nodes` x `gpus_per_node`, an NVSwitch per node (class "intra"), `nics_per_node`
//                    NICs per node (GPU-NIC class "pcie", NIC-fabric class "nic"), a non-blocking fabric;
//                    GPU g of a node uses NIC floor(g·K/G) both ways, so rank r's inter-node traffic
//                    leaves and enters through its own NIC (with K = G, one NIC per GPU)
//   host             this project's host backend: ranks are threads copying through one shared memory
//                    (classes "thread": each rank's own copy path, "memory": the bus, a node capacity)
//   graph            explicit nodes and links
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/core/errors.h"
#include "sim/units.h"

namespace cclab::sim {

// A bad topology file or spec; the message names the field.
class TopologyError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

// Most ranks a topology may have: the analytic model prices a million ranks at once (replay has its
// own, lower bound, kMaxReplayRanks in replay.h).
inline constexpr int kMaxTopologyRanks = 1 << 20;

// Physical ranges of topology values (checkSpec refuses anything outside, naming the field), so that
// no prediction prints inf or a 300-digit time: latencies up to 1 s per traversal (a thousand times a
// WAN round trip), bandwidths from 1 MB/s (a slow serial line) to 1 PB/s (a thousand times an
// NVSwitch port); 0 keeps its meaning of unlimited capacity or free compute.
inline constexpr Micros kMaxLatencyMicros = 1e6;
inline constexpr GBps kMinBandwidthGBps = 1e-3;
inline constexpr GBps kMaxBandwidthGBps = 1e6;
inline constexpr double kMinProtocolEfficiency = 0.01;  // below 1% no protocol is worth modelling

struct LinkClass {
  Micros latency = 0;   // per traversal
  GBps bandwidth = 0;   // per direction (the line rate); for a node class: its total capacity (0 = unlimited)
  double efficiency = 1.0;  // the link layer's payload fraction (packet headers, encoding): multiplies bandwidth
  friend bool operator==(const LinkClass&, const LinkClass&) = default;
};

// The two message protocols of a GPU collective (NCCL's LL and Simple), when a topology enables them
// (TopologySpec::llProtocol). A collective call takes one of them for all its messages (protocol.h:
// the one whose prediction of the whole call is lower, or one forced with --protocol):
//  - LL (low latency): every 8-byte store carries 4 bytes of data and a 4-byte flag, so the receiver
//    polls the data itself: one traversal of latency, half the bandwidth (first principles of the
//    format: 4 / 8).
//  - Simple (bulk): data at full bandwidth, then a flag written after a fence that waits for the data
//    to land: the data's traversal, its completion coming back, the flag's traversal (first
//    principles: 3 traversals).
// On an idle route LL delivers one message sooner while bytes·β < (kSimpleLatencyTraversals - 1)·L
// (β: the route's bottleneck, L: its latency); where messages share a link LL's longer hold counts too.
inline constexpr double kLLEfficiency = 0.5;
inline constexpr double kSimpleLatencyTraversals = 3;
//  - LL128 (where TopologySpec::ll128Protocol enables it): every 128-byte line carries 120 bytes of
//    data and an 8-byte flag (NCCL src/include/device.h: NCCL_LL128_LINESIZE 128, NCCL_LL128_DATAELEMS
//    15 of 16 8-byte words), so resources are held 128/120 as long as the bytes need, and the
//    receiver polls the data itself, as with LL. Its latency lies between LL's and Simple's: NCCL's
//    tuner (src/graph/tuning.cc, hwLatencies, NVLink ring: LL 0.6, LL128 1.9, Simple 3.4 µs per step)
//    puts it (1.9-0.6)/(3.4-0.6) = 0.46 of the way from LL to Simple; in traversals,
//    1 + 0.46·(kSimpleLatencyTraversals - 1) = 1.93. Per message on an idle route LL128 beats Simple
//    while bytes·β·(128/120 - 1) < 1.07·L (NVLink, L = 0.7 µs, 423 GB/s: below ~4.7 MB) and LL while
//    bytes·β·(2 - 128/120) < 0.93·L (~300 KB).
inline constexpr double kLL128Efficiency = 120.0 / 128.0;
inline constexpr double kLL128LatencyTraversals = 1 + (1.9 - 0.6) / (3.4 - 0.6) * (kSimpleLatencyTraversals - 1);

// Per-rank compute: the reduction of a received slice and a local copy are charged to the rank.
struct ComputeParams {
  GBps reduceBandwidth = 0;  // bytes of output per second a rank reduces; 0 = free
  GBps copyBandwidth = 0;    // bytes per second a rank copies locally; 0 = free
  int cores = 0;             // host kind: CPU cores the rank threads share (0 = one core per rank)
  Micros wakeLatency = 0;    // host kind, more ranks than cores: a waiting thread is woken by the OS,
                             // which adds this to every message (a futex wake and a context switch)
  Micros launchLatency = 0;  // start-up of every collective on every rank (a kernel launch)
  Micros proxyLatency = 0;   // more latency for every message that crosses a NIC (class "nic"), per
                             // latency traversal: the host proxy that drives the NIC has to post it
  friend bool operator==(const ComputeParams&, const ComputeParams&) = default;
};

struct SpecNode {
  std::string name;
  std::string cls;  // a class with a capacity, or empty for an unlimited switch
  friend bool operator==(const SpecNode&, const SpecNode&) = default;
};
struct SpecLink {
  std::string a, b, cls;
  friend bool operator==(const SpecLink&, const SpecLink&) = default;
};

// The kinds above; their names in files are name(kind): switch, fully_connected, pcie, cluster, host,
// graph.
enum class TopologyKind : std::uint8_t { Switch, FullyConnected, Pcie, Cluster, Host, Graph };
std::string_view name(TopologyKind k);
// Throws TopologyError naming the field 'kind' and every kind.
TopologyKind parseTopologyKind(std::string_view text);

struct TopologySpec {
  std::string name;
  TopologyKind kind = TopologyKind::Switch;
  int ranks = 0;     // for cluster: nodes * gpus_per_node (derived)
  int nodes = 1;           // cluster
  int gpusPerNode = 0;     // cluster
  int nicsPerNode = 1;     // cluster
  int gpusPerSwitch = 0;   // pcie
  double protocolEfficiency = 1.0;  // multiplies every bandwidth (a topology-wide factor; presets: 1)
  bool llProtocol = false;          // calls take LL or Simple (above; false: neither is modelled)
  bool ll128Protocol = false;       // calls may also take LL128 (needs llProtocol; NCCL enables it on
                                    // sm_70+ over NVLink only: src/graph/tuning.cc, the LL128 enable rule)
  GBps nvlsBandwidth = 0;           // NVLink SHARP (NVSwitch 3+): the in-switch allreduce rate of a node
                                    // (bytes of the vector per second); 0: the switch cannot reduce (no NVLS)
  int computeCapability = 0;        // the GPUs' SM version x10+minor (80 A100, 90 H100/H200; 0: not a GPU
                                    // or unknown): NCCL's tuner tables are per architecture (nccl_tuner.h)
  int channels = 0;                 // channels of the plans made for it; 0: defaultChannels()
  std::map<std::string, LinkClass> classes;
  ComputeParams compute;
  std::vector<SpecNode> graphNodes;  // graph
  std::vector<SpecLink> graphLinks;  // graph
  friend bool operator==(const TopologySpec&, const TopologySpec&) = default;
};

// Checks a spec (kinds, counts, classes each kind needs, positive bandwidths); throws TopologyError
// naming the field.
void checkSpec(const TopologySpec& spec);

// Full-duplex links a spec expands to (what a Topology's memory grows with).
std::int64_t linkCount(const TopologySpec& spec);
// Resident bytes a Topology of the spec takes, estimated from its links: a 1M-rank switch (1M links,
// 2M resources, 1M nodes, with their names) is 738 MB resident (docs/results/sim.md, "Scale: simulator
// time and memory").
inline constexpr std::int64_t kTopologyBytesPerLink = 740;
// Throws InvalidArgument (one line: the bytes the topology needs and the bytes available) when the
// spec's links would not fit in `available` bytes; Topology's constructor checks it against the host's
// MemAvailable (collectives/conventions/memory_budget.h) before building anything.
void requireTopologyFits(const TopologySpec& spec, std::int64_t available);

// Same spec with a different scale: ranks for switch/fully_connected/pcie/host/graph-free kinds;
// nodes and gpus for cluster (0 keeps the current value).
TopologySpec resized(TopologySpec spec, int ranks, int nodes = 0, int gpusPerNode = 0);

struct Resource {
  std::string name;   // "rank0->switch" for a link direction, the node name for a node capacity
  std::string cls;
  Micros latency = 0;
  GBps bandwidth = 0;  // protocol efficiency already applied; 0 = unlimited
};

struct Route {
  std::vector<int> resources;  // in order, from source to destination
  Micros latency = 0;          // sum over the resources
  GBps bottleneck = 0;         // min bandwidth over the resources (0 = unlimited)
};

class Topology {
 public:
  explicit Topology(const TopologySpec& spec);

  [[nodiscard]] const TopologySpec& spec() const { return spec_; }
  [[nodiscard]] int nranks() const { return nranks_; }
  [[nodiscard]] const std::vector<Resource>& resources() const { return resources_; }
  [[nodiscard]] const std::string& nodeName(int node) const { return nodeNames_[node]; }
  // Node id of rank r.
  [[nodiscard]] int rankNode(int r) const { return r; }
  // The route src -> dst (ranks), by breadth-first search; throws TopologyError when unreachable.
  [[nodiscard]] Route route(int src, int dst) const;
  // Routes from src to each of dsts (one search). The search expands only non-rank nodes and stops as
  // soon as every destination has a neighbour in the queue (the first one queued is its parent in the
  // breadth-first tree), so its cost does not grow with the ranks a switch serves: a route through
  // one switch costs O(1), a ring on a million-rank switch is O(p) (a cluster's fabric is scanned
  // until the destination's NIC, O(NICs)). Same routes as routesByFullSearch.
  [[nodiscard]] std::vector<Route> routesFrom(int src, const std::vector<int>& dsts) const;
  // The plain breadth-first search over every node (O(nodes + links) per call): the definition
  // routesFrom must equal (tests/sim/topology_test.cc).
  [[nodiscard]] std::vector<Route> routesByFullSearch(int src, const std::vector<int>& dsts) const;
  // Resource ids of the link directions leaving and entering rank r.
  [[nodiscard]] std::vector<int> rankLinks(int r) const;
  // Compute cost per byte of a rank (no straggler), µs/byte; cores sharing included.
  [[nodiscard]] MicrosPerByte reduceCost() const { return gamma_; }
  [[nodiscard]] MicrosPerByte copyCost() const { return delta_; }
  [[nodiscard]] int findResource(const std::string& name) const;
  // The plan shape for this topology: ranks per node (cluster: gpus_per_node; other kinds are one
  // node: 0) and channels (spec.channels, else defaultChannels()).
  [[nodiscard]] int ranksPerNode() const;
  [[nodiscard]] int channels() const { return spec_.channels > 0 ? spec_.channels : defaultChannels(); }
  // Cluster: one channel per GPU of a node. Ring channel c leaves every node through local rank
  // (c + G - 1) mod G (plan::ringOrder), so G channels leave through every GPU once, hence through
  // every GPU's NIC: each NIC carries G/K rings. Fewer channels leave NICs idle (1 channel: one NIC of
  // each node carries the whole ring). Other kinds: 1 (one node, one NVSwitch or PCIe tree: nothing
  // asks for more).
  [[nodiscard]] int defaultChannels() const;
  // True when resource `id` is a NIC link (class "nic"): start-up adds compute.proxy_us.
  [[nodiscard]] bool isNic(int id) const { return resources_[static_cast<std::size_t>(id)].cls == "nic"; }

 private:
  int addNode(const std::string& name, const std::string& cls);
  void addLink(int a, int b, const std::string& cls);
  [[nodiscard]] const LinkClass& classOf(const std::string& cls, const std::string& field) const;

  struct Edge {
    int to;
    int resource;
    int back;  // index of the reverse edge in adj_[to]
  };
  [[nodiscard]] Route routeAlong(int src, int dst, int firstHop, int firstResource, const std::vector<int>& parent,
                                 const std::vector<int>& via) const;
  TopologySpec spec_;
  int nranks_ = 0;
  std::vector<std::string> nodeNames_;
  std::vector<int> nodeResource_;  // node id -> capacity resource or -1
  std::vector<std::vector<Edge>> adj_;
  std::vector<std::vector<int>> infraAdj_;  // per node: indices into adj_ of its edges to non-rank nodes
  std::vector<Resource> resources_;
  std::map<std::string, int> nodeIds_;
  MicrosPerByte gamma_ = 0, delta_ = 0;
};

}  // namespace cclab::sim
