// What an NCCL topology dump becomes (nccl_topology.h): the node summary (NVSwitch or not, NICs and the
// GPUs on each) and the cclab topology of one or several nodes. The reader is nccl_topology_read.cc.
#include "sim/nccl_topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "collectives/core/input_file.h"
#include "sim/link_specs.h"

namespace cclab::sim {
namespace {

// Device ids from a device up to its CPU, the device first.
std::vector<int> ancestors(const NcclSystem& s, int d) {
  std::vector<int> a;
  for (int x = d; x >= 0; x = s.devices[static_cast<std::size_t>(x)].parent) a.push_back(x);
  return a;
}

// Links between two devices of the tree (cross-socket: both up to their CPU, one socket link).
int hops(const NcclSystem& s, int a, int b) {
  const auto pa = ancestors(s, a), pb = ancestors(s, b);
  if (pa.back() != pb.back()) return static_cast<int>(pa.size() + pb.size() - 1);
  const std::set<int> inA(pa.begin(), pa.end());
  for (std::size_t j = 0; j < pb.size(); ++j)
    if (inA.count(pb[j])) {
      const auto i = static_cast<std::size_t>(std::find(pa.begin(), pa.end(), pb[j]) - pa.begin());
      return static_cast<int>(i + j);
    }
  return static_cast<int>(pa.size() + pb.size());
}

[[noreturn]] void bad(const NcclSystem& s, const std::string& what) { throw TopologyError("nccl topology '" + s.source + "': " + what); }

GBps linkOf(const NcclSystem& s, int device, const char* role) {
  const NcclDevice& d = s.devices[static_cast<std::size_t>(device)];
  if (d.parent < 0) return 0;  // directly on the CPU: no PCIe link of its own
  if (d.link.gtPerSecond == 0) bad(s, fmt::format("<pci busid='{}'> ({}) has no attribute 'link_speed'", d.busId, role));
  return d.link.bandwidth();
}

GBps reduceRate(const NcclGpu& g) {
  if (auto b = specs::gpuMemoryBandwidth(g.pciDevice)) return *b;
  // By architecture when the device id is not in the table: H100 SXM5, A100 80GB, V100 (link_specs.h).
  if (g.sm >= 90) return 3350;
  if (g.sm >= 80) return 2039;
  if (g.sm >= 70) return 900;
  return 0;
}

}  // namespace

NcclNodeSummary summarize(const NcclSystem& s) {
  NcclNodeSummary r;
  r.gpus = static_cast<int>(s.gpus.size());
  r.sm = s.gpus[0].sm;
  std::map<std::string, int> gpuOfBus;
  for (int i = 0; i < r.gpus; ++i) gpuOfBus[s.devices[static_cast<std::size_t>(s.gpus[static_cast<std::size_t>(i)].device)].busId] = i;
  bool allSwitch = true, anyPair = false;
  std::set<std::pair<int, int>> pairs;
  for (int i = 0; i < r.gpus; ++i) {
    int toSwitch = 0;
    for (const auto& l : s.gpus[static_cast<std::size_t>(i)].nvlinks) {
      auto it = gpuOfBus.find(l.target);
      if (it == gpuOfBus.end() && l.toGpuClass) {
        r.nvlinksOutside += l.count;
      } else if (it == gpuOfBus.end()) {
        toSwitch += l.count;
      } else {
        anyPair = true;
        pairs.insert({std::min(i, it->second), std::max(i, it->second)});
      }
    }
    if (toSwitch == 0) allSwitch = false;
    const bool hasNvlink = toSwitch > 0 || !pairs.empty();
    if (hasNvlink && !specs::nvlinkPerLink(r.sm))
      bad(s, fmt::format("<gpu dev='{}'> attribute 'sm' {} has no NVLink generation (link_specs.h) but the GPU has <nvlink>", i, r.sm));
    if (toSwitch > 0) {
      const GBps bw = toSwitch * *specs::nvlinkPerLink(r.sm);
      r.nvlinkPerGpu = i == 0 || r.nvlinkPerGpu == 0 ? bw : std::min(r.nvlinkPerGpu, bw);
    }
  }
  r.nvswitch = allSwitch && !anyPair;
  if (!r.nvswitch) r.nvlinkPerGpu = 0;
  r.nvlinkPairs = static_cast<int>(pairs.size());
  // Each GPU on its nearest NIC: fewest PCIe hops, then the NIC with fewer GPUs so far, then the first.
  const int nets = static_cast<int>(s.nets.size());
  r.gpusOfNic.assign(static_cast<std::size_t>(nets), {});
  for (const auto& n : s.nets) r.nicBandwidth.push_back(n.speedMbps / 8000.0);
  r.rankOfGpu.resize(static_cast<std::size_t>(r.gpus));
  for (int i = 0; i < r.gpus; ++i) r.rankOfGpu[static_cast<std::size_t>(i)] = i;
  if (nets == 0) return r;
  std::vector<int> nicOf(static_cast<std::size_t>(r.gpus));
  for (int i = 0; i < r.gpus; ++i) {
    int best = -1, bestHops = 0;
    for (int n = 0; n < nets; ++n) {
      const int h = hops(s, s.gpus[static_cast<std::size_t>(i)].device, s.nets[static_cast<std::size_t>(n)].device);
      if (best < 0 || h < bestHops ||
          (h == bestHops && r.gpusOfNic[static_cast<std::size_t>(n)].size() < r.gpusOfNic[static_cast<std::size_t>(best)].size())) {
        best = n;
        bestHops = h;
      }
    }
    nicOf[static_cast<std::size_t>(i)] = best;
    r.gpusOfNic[static_cast<std::size_t>(best)].push_back(s.gpus[static_cast<std::size_t>(i)].dev);
    const GBps pcie = std::min(linkOf(s, s.gpus[static_cast<std::size_t>(i)].device, "a GPU"),
                               linkOf(s, s.nets[static_cast<std::size_t>(best)].device, "a NIC"));
    if (pcie > 0) r.gpuNicPcie = r.gpuNicPcie == 0 ? pcie : std::min(r.gpuNicPcie, pcie);
  }
  // Cluster order: the used NICs by their first GPU; each NIC's GPUs get consecutive ranks.
  std::vector<int> used;
  for (int n = 0; n < nets; ++n)
    if (!r.gpusOfNic[static_cast<std::size_t>(n)].empty()) used.push_back(n);
  std::sort(used.begin(), used.end(),
            [&](int a, int b) { return r.gpusOfNic[static_cast<std::size_t>(a)][0] < r.gpusOfNic[static_cast<std::size_t>(b)][0]; });
  int next = 0;
  for (int n : used)
    for (int dev : r.gpusOfNic[static_cast<std::size_t>(n)])
      for (int i = 0; i < r.gpus; ++i)
        if (s.gpus[static_cast<std::size_t>(i)].dev == dev) r.rankOfGpu[static_cast<std::size_t>(i)] = next++;
  return r;
}

namespace {

int usedNics(const NcclNodeSummary& s) {
  return static_cast<int>(std::count_if(s.gpusOfNic.begin(), s.gpusOfNic.end(), [](const auto& v) { return !v.empty(); }));
}
GBps slowestUsedNic(const NcclNodeSummary& s) {
  GBps b = 0;
  for (std::size_t n = 0; n < s.gpusOfNic.size(); ++n)
    if (!s.gpusOfNic[n].empty()) b = b == 0 ? s.nicBandwidth[n] : std::min(b, s.nicBandwidth[n]);
  return b;
}
// The cluster kind fits: every node alike, on NVSwitches, K NICs each serving G/K GPUs.
bool clusterFits(const std::vector<NcclNodeSummary>& ns) {
  const auto& a = ns[0];
  const int k = usedNics(a);
  if (!a.nvswitch || k == 0 || a.gpus % k != 0 || a.gpuNicPcie <= 0) return false;
  for (const auto& v : a.gpusOfNic)
    if (!v.empty() && static_cast<int>(v.size()) != a.gpus / k) return false;
  for (const auto& b : ns)
    if (!b.nvswitch || b.gpus != a.gpus || b.sm != a.sm || b.nvlinkPerGpu != a.nvlinkPerGpu || usedNics(b) != k ||
        b.gpuNicPcie != a.gpuNicPcie || slowestUsedNic(b) != slowestUsedNic(a) || b.gpusOfNic.size() != a.gpusOfNic.size())
      return false;
  for (const auto& b : ns)
    for (std::size_t n = 0; n < b.gpusOfNic.size(); ++n)
      if (!b.gpusOfNic[n].empty() && static_cast<int>(b.gpusOfNic[n].size()) != a.gpus / k) return false;
  return true;
}

void commonFields(TopologySpec& t, const NcclSystem& first, const NcclNodeSummary& s, bool nvlink) {
  t.llProtocol = true;
  t.ll128Protocol = nvlink && s.sm >= 70;  // NCCL runs LL128 over NVLink on sm_70+ (src/graph/tuning.cc)
  t.computeCapability = s.sm;
  const GBps reduce = reduceRate(first.gpus[0]);
  t.compute.reduceBandwidth = reduce;
  t.compute.copyBandwidth = reduce / 2;
  t.compute.launchLatency = specs::kKernelLaunch;
}

// A class per distinct bandwidth, named by it (GB/s, six significant digits).
std::string className(const char* kind, double x) { return fmt::format("{}_{:.6g}", kind, x); }

// The dump's own tree as a graph; several nodes join through their used NICs on one fabric.
TopologySpec graphOf(const std::vector<NcclSystem>& nodes, const std::vector<NcclNodeSummary>& sums) {
  TopologySpec t;
  t.kind = TopologyKind::Graph;
  bool anyNvlink = false;
  int rank = 0;
  const bool multi = nodes.size() > 1;
  GBps fastestNic = 0;
  if (multi)
    for (const auto& s : sums)
      for (std::size_t n = 0; n < s.gpusOfNic.size(); ++n)
        if (!s.gpusOfNic[n].empty()) fastestNic = std::max(fastestNic, s.nicBandwidth[n]);
  auto addClass = [&](const std::string& name, LinkClass c) {
    t.classes.emplace(name, c);
    return name;
  };
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const NcclSystem& s = nodes[k];
    const NcclNodeSummary& sum = sums[k];
    const std::string pre = multi ? fmt::format("n{}.", k) : "";
    // Which devices are GPUs, NICs, or lie on the way to one.
    std::map<int, std::string> nameOf;
    std::vector<bool> needed(s.devices.size(), false);
    for (std::size_t i = 0; i < s.gpus.size(); ++i) {
      nameOf[s.gpus[i].device] = fmt::format("rank{}", rank + sum.rankOfGpu[i]);
      for (int d : ancestors(s, s.gpus[i].device)) needed[static_cast<std::size_t>(d)] = true;
    }
    // Each used NIC port is a node of its own on its card (the card's <pci>: a dual-port card has one
    // PCIe link and two ports).
    std::vector<int> nicNodes;
    if (multi)
      for (std::size_t n = 0; n < s.nets.size(); ++n)
        if (!sum.gpusOfNic[n].empty()) {
          nicNodes.push_back(static_cast<int>(n));
          for (int d : ancestors(s, s.nets[n].device)) needed[static_cast<std::size_t>(d)] = true;
        }
    for (std::size_t d = 0; d < s.devices.size(); ++d)
      if (needed[d] && !nameOf.count(static_cast<int>(d))) {
        const std::string n = pre + (s.devices[d].parent < 0 ? s.devices[d].busId : "pci:" + s.devices[d].busId);
        nameOf[static_cast<int>(d)] = n;
        t.graphNodes.push_back({n, ""});
      }
    for (int n : nicNodes) t.graphNodes.push_back({pre + fmt::format("nic{}", n), ""});
    // PCIe links, each device to its parent.
    for (std::size_t d = 0; d < s.devices.size(); ++d) {
      const NcclDevice& dev = s.devices[d];
      if (!needed[d] || dev.parent < 0) continue;
      const GBps bw = linkOf(s, static_cast<int>(d), "on a GPU's or NIC's path");
      const std::string cls = addClass(className("pcie", bw), {specs::kPcieLatency, bw, specs::kPcieEfficiency});
      t.graphLinks.push_back({nameOf[static_cast<int>(d)], nameOf[dev.parent], cls});
    }
    // CPU sockets of the node, each pair joined.
    std::vector<int> cpus;
    for (std::size_t d = 0; d < s.devices.size(); ++d)
      if (needed[d] && s.devices[d].parent < 0) cpus.push_back(static_cast<int>(d));
    for (std::size_t i = 0; i < cpus.size(); ++i)
      for (std::size_t j = i + 1; j < cpus.size(); ++j)
        t.graphLinks.push_back({nameOf[cpus[i]], nameOf[cpus[j]], addClass("socket", {specs::kSocketLatency, specs::kSocketLink, 1.0})});
    // NVLinks: to the node's NVSwitch, or between GPUs (each pair once, its links summed).
    std::map<std::string, int> gpuOfBus;
    for (std::size_t i = 0; i < s.gpus.size(); ++i)
      gpuOfBus[s.devices[static_cast<std::size_t>(s.gpus[i].device)].busId] = static_cast<int>(i);
    std::map<std::pair<int, int>, int> pairLinks;
    bool switchAdded = false;
    for (std::size_t i = 0; i < s.gpus.size(); ++i) {
      int toSwitch = 0;
      for (const auto& l : s.gpus[i].nvlinks) {
        auto it = gpuOfBus.find(l.target);
        if (it == gpuOfBus.end() && l.toGpuClass) continue;  // a GPU outside the dump
        if (it == gpuOfBus.end())
          toSwitch += l.count;
        else if (it->second != static_cast<int>(i))
          pairLinks[{std::min<int>(static_cast<int>(i), it->second), std::max<int>(static_cast<int>(i), it->second)}] += l.count;
      }
      if (toSwitch > 0) {
        anyNvlink = true;
        if (!switchAdded) t.graphNodes.push_back({pre + "nvswitch", ""});
        switchAdded = true;
        const GBps bw = toSwitch * *specs::nvlinkPerLink(sum.sm);
        t.graphLinks.push_back({nameOf[s.gpus[i].device], pre + "nvswitch",
                                addClass(className("nvlink", bw), {specs::kNvlinkLatency, bw, specs::kNvlinkEfficiency})});
      }
    }
    for (const auto& [pr, links] : pairLinks) {
      anyNvlink = true;
      // Each side lists the pair's links: count them once.
      const int n = std::max(1, links / 2);
      const GBps bw = n * *specs::nvlinkPerLink(sum.sm);
      t.graphLinks.push_back({nameOf[s.gpus[static_cast<std::size_t>(pr.first)].device],
                              nameOf[s.gpus[static_cast<std::size_t>(pr.second)].device],
                              addClass(className("nvlink", bw), {specs::kNvlinkLatency, bw, specs::kNvlinkEfficiency})});
    }
    for (int n : nicNodes) {
      const GBps bw = sum.nicBandwidth[static_cast<std::size_t>(n)];
      // Class "nic" (the proxy's latency, Topology::isNic) for the fastest NICs, a class per speed for others.
      const std::string cls = bw == fastestNic ? "nic" : className("nic", bw);
      const std::string port = pre + fmt::format("nic{}", n);
      // Port to its card: no latency of its own, the port's rate (the card's PCIe link is the card's).
      t.graphLinks.push_back({port, nameOf[s.nets[static_cast<std::size_t>(n)].device], addClass(className("nicport", bw), {0, bw, 1.0})});
      t.graphLinks.push_back({port, "fabric", addClass(cls, {specs::kNicLatency, bw, specs::kNicEfficiency})});
    }
    if (multi && nicNodes.empty()) bad(s, fmt::format("no <net> element: the {} nodes have no NIC to join them", nodes.size()));
    rank += sum.gpus;
  }
  if (multi) {
    t.graphNodes.push_back({"fabric", ""});
    t.compute.proxyLatency = specs::kProxyPerMessage;
  }
  t.ranks = rank;
  commonFields(t, nodes[0], sums[0], anyNvlink);
  for (const auto& s : sums)
    if (s.sm != sums[0].sm) t.ll128Protocol = false;
  return t;
}

std::string baseName(const std::string& path) { return std::filesystem::path(path).stem().string(); }

}  // namespace

TopologySpec ncclTopology(const std::vector<NcclSystem>& nodes) {
  if (nodes.empty()) throw TopologyError("nccl topology: no node");
  std::vector<NcclNodeSummary> sums;
  for (const auto& n : nodes) sums.push_back(summarize(n));
  const NcclNodeSummary& a = sums[0];
  TopologySpec t;
  if (nodes.size() == 1 && a.nvswitch) {
    t.kind = TopologyKind::Switch;
    t.ranks = a.gpus;
    t.classes["link"] = {specs::kNvlinkLatency, a.nvlinkPerGpu, specs::kNvlinkEfficiency};
    t.nvlsBandwidth = a.sm >= 90 ? specs::kNvlsHopper : 0;
    commonFields(t, nodes[0], a, true);
  } else if (nodes.size() == 1 && a.gpus == 1) {
    // One GPU alone: nothing to route; a one-rank switch on its PCIe link keeps every command working.
    const GBps pcie = linkOf(nodes[0], nodes[0].gpus[0].device, "the GPU");
    if (pcie <= 0) bad(nodes[0], "the one GPU sits right under its CPU, without a <pci> link to read");
    t.kind = TopologyKind::Switch;
    t.ranks = 1;
    t.classes["link"] = {specs::kPcieLatency, pcie, specs::kPcieEfficiency};
    commonFields(t, nodes[0], a, false);
  } else if (nodes.size() > 1 && clusterFits(sums)) {
    t.kind = TopologyKind::Cluster;
    t.nodes = static_cast<int>(nodes.size());
    t.gpusPerNode = a.gpus;
    t.nicsPerNode = usedNics(a);
    t.ranks = t.nodes * t.gpusPerNode;
    t.classes["intra"] = {specs::kNvlinkLatency, a.nvlinkPerGpu, specs::kNvlinkEfficiency};
    t.classes["pcie"] = {specs::kPcieLatency, a.gpuNicPcie, specs::kPcieEfficiency};
    t.classes["nic"] = {specs::kNicLatency, slowestUsedNic(a), specs::kNicEfficiency};
    t.nvlsBandwidth = a.sm >= 90 ? specs::kNvlsHopper : 0;
    commonFields(t, nodes[0], a, true);
    t.compute.proxyLatency = specs::kProxyPerMessage;
  } else {
    t = graphOf(nodes, sums);
  }
  t.name = "nccl:" + baseName(nodes[0].source) + (nodes.size() > 1 ? fmt::format("x{}", nodes.size()) : "");
  checkSpec(t);
  return t;
}

std::vector<std::string> ncclTopologyFiles(const std::string& arg) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (;;) {  // getline would drop a trailing empty part ("a.xml,")
    const std::size_t comma = arg.find(',', begin);
    parts.push_back(arg.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  bool any = false;
  for (const auto& part : parts) any = any || hasExtension(part, ".xml");
  if (!any) return {};
  for (const auto& part : parts) {
    if (part.empty()) throw TopologyError("'" + arg + "': an empty name in the list of NCCL topology dumps");
    if (!hasExtension(part, ".xml"))
      throw TopologyError("'" + arg + "': '" + part + "' is not a .xml file; a list names NCCL topology dumps only, one per node");
  }
  return parts;
}

bool isNcclTopologyArg(const std::string& arg) { return !ncclTopologyFiles(arg).empty(); }

std::optional<TopologySpec> resolveNcclTopology(const std::string& arg, int nodes) {
  const std::vector<std::string> files = ncclTopologyFiles(arg);
  if (files.empty()) return std::nullopt;
  const auto checkRanks = [&](std::int64_t nodeCount, std::int64_t gpus) {
    if (nodeCount * gpus > kMaxTopologyRanks)
      throw TopologyError(fmt::format("{} node(s) of {} GPU(s) are {} ranks, more than the {} a topology can have", nodeCount, gpus,
                                      nodeCount * gpus, kMaxTopologyRanks));
  };
  if (files.size() == 1) {
    const NcclSystem s = loadNcclSystem(files[0]);
    const int copies = std::max(1, nodes);
    // Bounded before any copy is made: a million nodes of one dump must not be built to be refused.
    checkRanks(copies, static_cast<std::int64_t>(s.gpus.size()));
    if (copies <= 2) return ncclTopology(std::vector<NcclSystem>(static_cast<std::size_t>(copies), s));
    // Copies of one node: a cluster of two says it all (its fields do not depend on the node count).
    TopologySpec two = ncclTopology({s, s});
    if (two.kind != TopologyKind::Cluster) return ncclTopology(std::vector<NcclSystem>(static_cast<std::size_t>(copies), s));
    two.nodes = copies;
    two.ranks = copies * two.gpusPerNode;
    two.name = "nccl:" + std::filesystem::path(files[0]).stem().string() + fmt::format("x{}", copies);
    checkSpec(two);
    return two;
  }
  if (nodes > 0 && nodes != static_cast<int>(files.size()))
    throw TopologyError(
        fmt::format("--nodes {} with {} topology files: one file per node, or one file for every node", nodes, files.size()));
  std::vector<NcclSystem> systems;
  std::int64_t gpus = 0;
  for (const auto& f : files) {
    systems.push_back(loadNcclSystem(f));
    gpus += static_cast<std::int64_t>(systems.back().gpus.size());
  }
  checkRanks(1, gpus);
  return ncclTopology(systems);
}

std::string describe(const NcclNodeSummary& s) {
  std::string out = fmt::format("# {} GPU(s), sm {}, ", s.gpus, s.sm);
  if (s.nvswitch)
    out += fmt::format("NVSwitch: {:.1f} GB/s NVLink per GPU", s.nvlinkPerGpu);
  else if (s.nvlinkPairs > 0)
    out += fmt::format("NVLink between GPUs: {} pair(s)", s.nvlinkPairs);
  else
    out += "no NVLink (PCIe)";
  if (s.nvlinksOutside > 0) out += fmt::format(" ({} NVLink(s) to GPUs outside the dump left out)", s.nvlinksOutside);
  out += fmt::format("; {} NIC(s)", s.gpusOfNic.size());
  for (std::size_t n = 0; n < s.gpusOfNic.size(); ++n) {
    out += fmt::format("{} {}: {:.1f} GB/s, GPUs", n == 0 ? ":" : ";", n, s.nicBandwidth[n]);
    if (s.gpusOfNic[n].empty()) out += " none";
    for (int g : s.gpusOfNic[n]) out += fmt::format(" {}", g);
  }
  return out + "\n";
}

}  // namespace cclab::sim
