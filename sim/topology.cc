#include "sim/topology.h"

#include "collectives/conventions/memory_budget.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <set>
#include <sstream>

namespace cclab::sim {
namespace {

// fully_connected builds p(p-1)/2 links: 512 ranks are 130,816 links (built in under 0.1 s); 10^5 ranks would
// be 5·10^9 links, an out-of-memory kill instead of an error. Larger models use kind 'switch'.
constexpr int kMaxFullyConnectedRanks = 512;

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw TopologyError("topology field '" + field + "' " + what);
}

std::string fmtNumber(double v) {
  std::ostringstream m;
  m << v;
  return m.str();
}

std::string rankName(int r) { return "rank" + std::to_string(r); }

// Classes each kind needs for its links (node classes are optional).
std::vector<std::string> requiredLinkClasses(TopologyKind kind) {
  if (kind == TopologyKind::Switch || kind == TopologyKind::FullyConnected) return {"link"};
  if (kind == TopologyKind::Pcie) return {"pcie", "uplink"};
  if (kind == TopologyKind::Cluster) return {"intra", "pcie", "nic"};
  if (kind == TopologyKind::Host) return {"thread"};
  return {};
}

}  // namespace

constexpr TopologyKind kKinds[] = {TopologyKind::Switch, TopologyKind::FullyConnected, TopologyKind::Pcie,
                                   TopologyKind::Cluster, TopologyKind::Host, TopologyKind::Graph};

std::string_view name(TopologyKind k) {
  switch (k) {
    case TopologyKind::Switch: return "switch";
    case TopologyKind::FullyConnected: return "fully_connected";
    case TopologyKind::Pcie: return "pcie";
    case TopologyKind::Cluster: return "cluster";
    case TopologyKind::Host: return "host";
    case TopologyKind::Graph: return "graph";
  }
  return "?";
}

TopologyKind parseTopologyKind(std::string_view text) {
  std::string all;
  for (TopologyKind k : kKinds) {
    if (text == name(k)) return k;
    all += (all.empty() ? "" : ", ") + std::string(name(k));
  }
  fail("kind", "must be one of " + all + " (got '" + std::string(text) + "')");
}

void checkSpec(const TopologySpec& s) {
  if (s.kind == TopologyKind::Cluster) {
    if (s.nodes < 1 || s.nodes > kMaxTopologyRanks) fail("nodes", "must be >= 1 (got " + std::to_string(s.nodes) + ")");
    if (s.gpusPerNode < 1 || s.gpusPerNode > 1024)
      fail("gpus_per_node", "must be in 1..1024 (got " + std::to_string(s.gpusPerNode) + ")");
    if (s.nicsPerNode < 1 || s.nicsPerNode > s.gpusPerNode)
      fail("nics_per_node", "must be in 1..gpus_per_node (got " + std::to_string(s.nicsPerNode) + ")");
    if (static_cast<std::int64_t>(s.nodes) * s.gpusPerNode > kMaxTopologyRanks) fail("nodes", "times gpus_per_node is too many ranks");
  } else if (s.ranks < 1 || s.ranks > kMaxTopologyRanks) {
    fail("ranks", "must be in 1.." + std::to_string(kMaxTopologyRanks) + " (got " + std::to_string(s.ranks) + ")");
  }
  if (s.kind == TopologyKind::FullyConnected && s.ranks > kMaxFullyConnectedRanks)
    fail("ranks", "must be at most " + std::to_string(kMaxFullyConnectedRanks) +
                      " for kind 'fully_connected' (a link per pair; use kind 'switch') (got " + std::to_string(s.ranks) + ")");
  if (s.kind == TopologyKind::Pcie && s.gpusPerSwitch < 1)
    fail("gpus_per_switch", "must be >= 1 (got " + std::to_string(s.gpusPerSwitch) + ")");
  if (!(s.protocolEfficiency >= kMinProtocolEfficiency && s.protocolEfficiency <= 1))
    fail("protocol_efficiency", "must be in " + fmtNumber(kMinProtocolEfficiency) + "..1 (got " + fmtNumber(s.protocolEfficiency) + ")");
  auto physicalBandwidth = [](const std::string& field, GBps b) {  // 0 = unlimited / free
    if (!(b == 0 || (b >= kMinBandwidthGBps && b <= kMaxBandwidthGBps)))
      fail(field, "must be 0 or in " + fmtNumber(kMinBandwidthGBps) + ".." + fmtNumber(kMaxBandwidthGBps) + " GB/s (got " +
                      fmtNumber(b) + ")");
  };
  auto physicalLatency = [](const std::string& field, Micros l) {
    if (!(l >= 0 && l <= kMaxLatencyMicros))
      fail(field, "must be in 0.." + fmtNumber(kMaxLatencyMicros) + " us (got " + fmtNumber(l) + ")");
  };
  for (const auto& [name, c] : s.classes) {
    physicalLatency("classes." + name + ".latency_us", c.latency);
    physicalBandwidth("classes." + name + ".bandwidth_gbps", c.bandwidth);
    if (!(c.efficiency >= kMinProtocolEfficiency && c.efficiency <= 1))
      fail("classes." + name + ".efficiency", "must be in " + fmtNumber(kMinProtocolEfficiency) + "..1 (got " + fmtNumber(c.efficiency) + ")");
  }
  if (s.ll128Protocol && !s.llProtocol) fail("ll128_protocol", "needs ll_protocol true (LL128 is the third protocol of a GPU topology)");
  if (s.computeCapability < 0 || s.computeCapability > 200)
    fail("compute_capability", "must be in 0..200 (the SM version x10, e.g. 90; 0: unknown) (got " + std::to_string(s.computeCapability) + ")");
  if (s.ll128Protocol && s.computeCapability > 0 && s.computeCapability < 70)
    fail("ll128_protocol", "needs compute_capability >= 70 (NCCL runs LL128 on Volta and later only)");
  physicalBandwidth("nvls_gbps", s.nvlsBandwidth);
  if (s.nvlsBandwidth > 0 && s.kind != TopologyKind::Switch && s.kind != TopologyKind::Cluster)
    fail("nvls_gbps", "needs kind 'switch' or 'cluster' (NVLS reduces in an NVSwitch)");
  if (s.channels < 0 || s.channels > 64) fail("channels", "must be in 0..64 (0: the topology's default) (got " + std::to_string(s.channels) + ")");
  std::set<std::string> linkClasses;
  for (const auto& c : requiredLinkClasses(s.kind)) linkClasses.insert(c);
  for (const auto& l : s.graphLinks) linkClasses.insert(l.cls);
  for (const auto& c : linkClasses) {
    auto it = s.classes.find(c);
    if (it == s.classes.end()) fail("classes." + c, "is missing (kind '" + std::string(name(s.kind)) + "' needs it)");
    if (!(it->second.bandwidth > 0)) fail("classes." + c + ".bandwidth_gbps", "must be a positive number");
  }
  if (s.kind == TopologyKind::Host && !s.classes.contains("memory")) fail("classes.memory", "is missing (kind 'host' needs it)");
  const auto& c = s.compute;
  physicalBandwidth("compute.reduce_gbps", c.reduceBandwidth);
  physicalBandwidth("compute.copy_gbps", c.copyBandwidth);
  if (c.cores < 0 || c.cores > kMaxTopologyRanks) fail("compute.cores", "must be in 0.." + std::to_string(kMaxTopologyRanks));
  physicalLatency("compute.wake_us", c.wakeLatency);
  physicalLatency("compute.launch_us", c.launchLatency);
  physicalLatency("compute.proxy_us", c.proxyLatency);
  if (s.kind == TopologyKind::Graph) {
    std::set<std::string> names;
    for (int r = 0; r < s.ranks; ++r) names.insert(rankName(r));
    for (std::size_t i = 0; i < s.graphNodes.size(); ++i) {
      const auto& n = s.graphNodes[i];
      const std::string f = "nodes[" + std::to_string(i) + "]";
      if (n.name.empty()) fail(f + ".name", "must be a non-empty string");
      if (!names.insert(n.name).second) fail(f + ".name", "'" + n.name + "' is defined twice (ranks are rank0..rankN-1)");
      if (!n.cls.empty() && !s.classes.contains(n.cls)) fail(f + ".class", "'" + n.cls + "' is not in classes");
    }
    if (s.graphLinks.empty()) fail("links", "must list at least one link");
    for (std::size_t i = 0; i < s.graphLinks.size(); ++i) {
      const auto& l = s.graphLinks[i];
      const std::string f = "links[" + std::to_string(i) + "]";
      if (!names.contains(l.a)) fail(f + ".a", "'" + l.a + "' is not a node");
      if (!names.contains(l.b)) fail(f + ".b", "'" + l.b + "' is not a node");
      if (l.a == l.b) fail(f + ".b", "a link needs two different nodes");
    }
  }
}

std::int64_t linkCount(const TopologySpec& s) {
  const std::int64_t n = s.kind == TopologyKind::Cluster ? std::int64_t{s.nodes} * s.gpusPerNode : s.ranks;
  switch (s.kind) {
    case TopologyKind::Switch:
    case TopologyKind::Host: return n;
    case TopologyKind::FullyConnected: return n * (n - 1) / 2;
    case TopologyKind::Pcie: return n + (s.gpusPerSwitch > 0 ? (n + s.gpusPerSwitch - 1) / s.gpusPerSwitch : 0);
    case TopologyKind::Cluster: return std::int64_t{s.nodes} * (s.nicsPerNode + 2 * std::int64_t{s.gpusPerNode});
    case TopologyKind::Graph: return static_cast<std::int64_t>(s.graphLinks.size());
  }
  return 0;
}

void requireTopologyFits(const TopologySpec& spec, std::int64_t available) {
  const std::int64_t links = linkCount(spec);
  conventions::requireMemory(conventions::saturatingBytes(links, kTopologyBytesPerLink), available,
                             "topology '" + spec.name + "' (" + std::to_string(links) + " links)", "host memory");
}

TopologySpec resized(TopologySpec spec, int ranks, int nodes, int gpusPerNode) {
  if (spec.kind == TopologyKind::Cluster) {
    if (nodes > 0) spec.nodes = nodes;
    if (gpusPerNode > 0) {
      spec.gpusPerNode = gpusPerNode;
      spec.nicsPerNode = std::min(spec.nicsPerNode, gpusPerNode);
    }
    if (ranks > 0 && nodes <= 0) {
      if (ranks % spec.gpusPerNode != 0)
        throw TopologyError("ranks " + std::to_string(ranks) + " is not a multiple of gpus_per_node " +
                            std::to_string(spec.gpusPerNode));
      spec.nodes = ranks / spec.gpusPerNode;
    }
    spec.ranks = spec.nodes * spec.gpusPerNode;
  } else if (ranks > 0 && ranks != spec.ranks) {
    if (spec.kind == TopologyKind::Graph) throw TopologyError("a graph topology has a fixed rank count (" + std::to_string(spec.ranks) + ")");
    spec.ranks = ranks;
  }
  return spec;
}

const LinkClass& Topology::classOf(const std::string& cls, const std::string& field) const {
  auto it = spec_.classes.find(cls);
  if (it == spec_.classes.end()) fail(field, "names class '" + cls + "' which is not in classes");
  return it->second;
}

int Topology::addNode(const std::string& name, const std::string& cls) {
  const int id = static_cast<int>(nodeNames_.size());
  nodeNames_.push_back(name);
  adj_.emplace_back();
  if (spec_.kind == TopologyKind::Graph) nodeIds_[name] = id;  // only a graph's links name their nodes
  int res = -1;
  if (!cls.empty()) {
    auto it = spec_.classes.find(cls);
    if (it != spec_.classes.end() && it->second.bandwidth > 0) {
      res = static_cast<int>(resources_.size());
      resources_.push_back({name, cls, it->second.latency, it->second.bandwidth * it->second.efficiency * spec_.protocolEfficiency});
    }
  }
  nodeResource_.push_back(res);
  return id;
}

void Topology::addLink(int a, int b, const std::string& cls) {
  const LinkClass& c = classOf(cls, "links");
  const int ia = static_cast<int>(adj_[a].size()), ib = static_cast<int>(adj_[b].size());
  for (int dir = 0; dir < 2; ++dir) {
    const int from = dir == 0 ? a : b, to = dir == 0 ? b : a;
    adj_[from].push_back({to, static_cast<int>(resources_.size()), dir == 0 ? ib : ia});
    resources_.push_back({nodeNames_[from] + "->" + nodeNames_[to], cls, c.latency, c.bandwidth * c.efficiency * spec_.protocolEfficiency});
  }
}

Topology::Topology(const TopologySpec& spec) : spec_(spec) {
  checkSpec(spec_);
  if (const auto available = conventions::hostMemoryAvailable()) requireTopologyFits(spec_, *available);
  if (spec_.kind == TopologyKind::Cluster) spec_.ranks = spec_.nodes * spec_.gpusPerNode;
  nranks_ = spec_.ranks;
  const int n = nranks_;
  for (int r = 0; r < n; ++r) addNode(rankName(r), "");
  const TopologyKind k = spec_.kind;
  int mem = -1;  // the host kind's memory node
  if (k == TopologyKind::Switch) {
    const int sw = addNode("switch", "switch");
    for (int r = 0; r < n; ++r) addLink(r, sw, "link");
  } else if (k == TopologyKind::FullyConnected) {
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b) addLink(a, b, "link");
  } else if (k == TopologyKind::Pcie) {
    const int g = spec_.gpusPerSwitch;
    const int cpu = addNode("cpu", "cpu");
    for (int s = 0; s * g < n; ++s) {
      const int sw = addNode("pcie_switch" + std::to_string(s), "switch");
      addLink(sw, cpu, "uplink");
      for (int r = s * g; r < std::min(n, (s + 1) * g); ++r) addLink(r, sw, "pcie");
    }
  } else if (k == TopologyKind::Cluster) {
    const int G = spec_.gpusPerNode, K = spec_.nicsPerNode;
    const int fabric = addNode("fabric", "fabric");
    for (int node = 0; node < spec_.nodes; ++node) {
      const std::string prefix = "node" + std::to_string(node) + ".";
      const int sw = addNode(prefix + "nvswitch", "switch");
      std::vector<int> nics;
      for (int j = 0; j < K; ++j) {
        nics.push_back(addNode(prefix + "nic" + std::to_string(j), ""));
        addLink(nics.back(), fabric, "nic");
      }
      for (int g = 0; g < G; ++g) {
        const int r = node * G + g;
        addLink(r, sw, "intra");  // listed first: intra-node routes prefer NVLink
        addLink(r, nics[static_cast<std::size_t>(g * K / G)], "pcie");
      }
    }
  } else if (k == TopologyKind::Host) {
    mem = addNode("memory", "memory");
    for (int r = 0; r < n; ++r) addLink(r, mem, "thread");
  } else {  // graph
    for (const auto& node : spec_.graphNodes) addNode(node.name, node.cls);
    for (const auto& l : spec_.graphLinks) addLink(nodeIds_.at(l.a), nodeIds_.at(l.b), l.cls);
  }
  infraAdj_.resize(adj_.size());
  for (std::size_t u = 0; u < adj_.size(); ++u)
    for (int i = 0; i < static_cast<int>(adj_[u].size()); ++i)
      if (adj_[u][static_cast<std::size_t>(i)].to >= nranks_) infraAdj_[u].push_back(i);
  const auto& c = spec_.compute;
  // Host backend: rank threads share `cores` CPUs, so each computes at cores/nranks of its speed.
  const bool oversubscribed = k == TopologyKind::Host && c.cores > 0 && n > c.cores;
  const double share = oversubscribed ? static_cast<double>(n) / c.cores : 1.0;
  if (oversubscribed && c.wakeLatency > 0) {
    if (nodeResource_[mem] < 0) throw TopologyError("topology field 'classes.memory.bandwidth_gbps' must be > 0 for compute.wake_us");
    resources_[nodeResource_[mem]].latency += c.wakeLatency;
  }
  gamma_ = inverseBandwidth(c.reduceBandwidth) * share;
  delta_ = inverseBandwidth(c.copyBandwidth) * share;
}

Route Topology::routeAlong(int src, int dst, int firstHop, int firstResource, const std::vector<int>& parent,
                           const std::vector<int>& via) const {
  Route route;
  std::vector<int> rev;
  for (int v = dst, u = firstHop, res = firstResource;;) {
    rev.push_back(res);
    if (u == src) break;
    if (nodeResource_[u] >= 0) rev.push_back(nodeResource_[u]);
    v = u;
    res = via[v];
    u = parent[v];
  }
  route.resources.assign(rev.rbegin(), rev.rend());
  route.bottleneck = std::numeric_limits<double>::infinity();
  for (int id : route.resources) {
    route.latency += resources_[id].latency;
    if (resources_[id].bandwidth > 0) route.bottleneck = std::min(route.bottleneck, resources_[id].bandwidth);
  }
  if (route.bottleneck == std::numeric_limits<double>::infinity()) route.bottleneck = 0;
  return route;
}

// The breadth-first tree of routesByFullSearch, computed lazily: rank v's parent is the neighbour the
// search dequeues first (the first one it queues), through that neighbour's first edge to v, and
// ranks are never expanded, so only non-rank nodes need to be queued, and the search may stop once
// every destination has a queued neighbour. Scratch arrays are per thread and reset by a generation
// stamp, so a call costs what it visits, not the topology's size.
namespace {
// routesFrom: a node with more non-rank neighbours than this is expanded directly (expandDirect).
constexpr std::size_t kDirectExpandDegree = 64;
}  // namespace

std::vector<Route> Topology::routesFrom(int src, const std::vector<int>& dsts) const {
  struct Scratch {
    std::vector<std::uint32_t> stamp, candidate;
    std::vector<int> order, parent, via;
    std::uint32_t generation = 0;
  };
  thread_local Scratch w;
  const std::size_t nn = nodeNames_.size();
  if (w.stamp.size() < nn || ++w.generation == 0) {
    w.stamp.assign(std::max(nn, w.stamp.size()), 0);
    w.candidate.assign(w.stamp.size(), 0);
    w.order.resize(w.stamp.size());
    w.parent.resize(w.stamp.size());
    w.via.resize(w.stamp.size());
    w.generation = 1;
  }
  const std::uint32_t gen = w.generation;
  // Candidates: the expandable neighbours of each destination (src, or a non-rank node).
  std::vector<std::pair<int, int>> cand;  // (node, index into dsts)
  std::vector<char> resolved(dsts.size(), 0);
  std::size_t remaining = 0;
  for (std::size_t i = 0; i < dsts.size(); ++i) {
    if (dsts[i] == src) {
      resolved[i] = 1;
      continue;
    }
    ++remaining;
    for (const Edge& e : adj_[static_cast<std::size_t>(dsts[i])])
      if (e.to == src || e.to >= nranks_) {
        cand.emplace_back(e.to, static_cast<int>(i));
        w.candidate[static_cast<std::size_t>(e.to)] = gen;
      }
  }
  std::sort(cand.begin(), cand.end());
  int pushed = 0;
  std::deque<int> queue;
  auto push = [&](int v, int parent, int via) {
    w.stamp[static_cast<std::size_t>(v)] = gen;
    w.order[static_cast<std::size_t>(v)] = pushed++;
    w.parent[static_cast<std::size_t>(v)] = parent;
    w.via[static_cast<std::size_t>(v)] = via;
    queue.push_back(v);
    if (w.candidate[static_cast<std::size_t>(v)] != gen) return;
    for (auto it = std::lower_bound(cand.begin(), cand.end(), std::pair{v, -1}); it != cand.end() && it->first == v; ++it)
      if (!resolved[static_cast<std::size_t>(it->second)]) {
        resolved[static_cast<std::size_t>(it->second)] = 1;
        --remaining;
      }
  };
  // Expanding a node of many neighbours (a cluster's fabric: every NIC) when each destination left
  // has a candidate among them: the search ends inside this expansion, so only those candidates need
  // pushing, in the order the scan would push them (edge order); the neighbours the scan would push
  // before them are no destination's candidate and never expanded, so the routes are the same.
  std::vector<std::pair<int, int>> hits;  // (u's edge index, candidate)
  auto expandDirect = [&](int u) {
    hits.clear();
    for (std::size_t i = 0; i < dsts.size(); ++i) {
      if (resolved[i]) continue;
      bool found = false;
      for (const Edge& e : adj_[static_cast<std::size_t>(dsts[i])]) {
        if (!(e.to == src || e.to >= nranks_) || w.stamp[static_cast<std::size_t>(e.to)] == gen) continue;
        const auto& back = adj_[static_cast<std::size_t>(e.to)];
        if (back.size() > kDirectExpandDegree) continue;  // too many edges to look for u among
        int first = -1;
        for (const Edge& f : back)
          if (f.to == u && (first < 0 || f.back < first)) first = f.back;
        if (first < 0) continue;
        hits.emplace_back(first, e.to);
        found = true;
      }
      if (!found) return false;
    }
    std::sort(hits.begin(), hits.end());
    const auto& edges = adj_[static_cast<std::size_t>(u)];
    for (const auto& [edge, v] : hits) {
      if (w.stamp[static_cast<std::size_t>(v)] == gen) continue;
      push(v, u, edges[static_cast<std::size_t>(edge)].resource);
      if (remaining == 0) break;
    }
    return true;
  };
  push(src, -1, -1);
  while (!queue.empty() && remaining > 0) {
    const int u = queue.front();
    queue.pop_front();
    if (infraAdj_[static_cast<std::size_t>(u)].size() > kDirectExpandDegree && expandDirect(u)) break;
    const auto& edges = adj_[static_cast<std::size_t>(u)];
    for (int i : infraAdj_[static_cast<std::size_t>(u)]) {
      const Edge& e = edges[static_cast<std::size_t>(i)];
      if (w.stamp[static_cast<std::size_t>(e.to)] == gen) continue;
      push(e.to, u, e.resource);
      if (remaining == 0) break;
    }
  }
  std::vector<Route> out;
  out.reserve(dsts.size());
  for (int d : dsts) {
    if (d == src) {
      out.emplace_back();
      continue;
    }
    int best = -1, bestEdge = -1;  // the first queued neighbour, through its first edge to d
    for (const Edge& e : adj_[static_cast<std::size_t>(d)]) {
      if (!(e.to == src || e.to >= nranks_) || w.stamp[static_cast<std::size_t>(e.to)] != gen) continue;
      if (best < 0 || w.order[static_cast<std::size_t>(e.to)] < w.order[static_cast<std::size_t>(best)] ||
          (e.to == best && e.back < bestEdge)) {
        best = e.to;
        bestEdge = e.back;
      }
    }
    if (best < 0) throw TopologyError("topology '" + spec_.name + "': no route from rank" + std::to_string(src) + " to rank" + std::to_string(d));
    out.push_back(routeAlong(src, d, best, adj_[static_cast<std::size_t>(best)][static_cast<std::size_t>(bestEdge)].resource,
                             w.parent, w.via));
  }
  return out;
}

std::vector<Route> Topology::routesByFullSearch(int src, const std::vector<int>& dsts) const {
  const int nn = static_cast<int>(nodeNames_.size());
  std::vector<int> viaResource(static_cast<std::size_t>(nn), -1), parent(static_cast<std::size_t>(nn), -1);
  std::vector<char> seen(static_cast<std::size_t>(nn), 0);
  std::deque<int> queue{src};
  seen[src] = 1;
  std::size_t remaining = dsts.size();
  std::vector<char> wanted(static_cast<std::size_t>(nn), 0);
  for (int d : dsts) wanted[d] = 1;
  while (!queue.empty() && remaining > 0) {
    const int u = queue.front();
    queue.pop_front();
    if (u != src && u < nranks_) continue;  // never route through a rank
    for (const Edge& e : adj_[u]) {
      if (seen[e.to]) continue;
      seen[e.to] = 1;
      parent[e.to] = u;
      viaResource[e.to] = e.resource;
      if (wanted[e.to]) {
        wanted[e.to] = 0;
        --remaining;
      }
      queue.push_back(e.to);
    }
  }
  std::vector<Route> out;
  out.reserve(dsts.size());
  for (int d : dsts) {
    Route route;
    if (d == src) {
      out.push_back(route);
      continue;
    }
    if (!seen[d]) throw TopologyError("topology '" + spec_.name + "': no route from rank" + std::to_string(src) + " to rank" + std::to_string(d));
    std::vector<int> rev;
    for (int v = d; v != src; v = parent[v]) {
      rev.push_back(viaResource[v]);
      const int u = parent[v];
      if (u != src && nodeResource_[u] >= 0) rev.push_back(nodeResource_[u]);
    }
    route.resources.assign(rev.rbegin(), rev.rend());
    route.bottleneck = std::numeric_limits<double>::infinity();
    for (int id : route.resources) {
      route.latency += resources_[id].latency;
      if (resources_[id].bandwidth > 0) route.bottleneck = std::min(route.bottleneck, resources_[id].bandwidth);
    }
    if (route.bottleneck == std::numeric_limits<double>::infinity()) route.bottleneck = 0;
    out.push_back(std::move(route));
  }
  return out;
}

Route Topology::route(int src, int dst) const {
  if (src < 0 || src >= nranks_ || dst < 0 || dst >= nranks_)
    throw TopologyError("route: rank out of range (" + std::to_string(src) + " -> " + std::to_string(dst) + ")");
  return routesFrom(src, {dst}).front();
}

std::vector<int> Topology::rankLinks(int r) const {
  std::vector<int> out;
  const std::string prefix = nodeNames_[r] + "->", suffix = "->" + nodeNames_[r];
  for (int i = 0; i < static_cast<int>(resources_.size()); ++i) {
    const auto& name = resources_[i].name;
    if (name.starts_with(prefix) || (name.size() > suffix.size() && name.ends_with(suffix))) out.push_back(i);
  }
  return out;
}

int Topology::ranksPerNode() const {
  return spec_.kind == TopologyKind::Cluster && spec_.nodes > 1 ? spec_.gpusPerNode : 0;
}

int Topology::defaultChannels() const {
  return spec_.kind == TopologyKind::Cluster ? std::min(spec_.gpusPerNode, 64) : 1;
}

int Topology::findResource(const std::string& name) const {
  for (int i = 0; i < static_cast<int>(resources_.size()); ++i)
    if (resources_[i].name == name) return i;
  return -1;
}

}  // namespace cclab::sim
