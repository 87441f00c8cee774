// Effective α, β, γ, δ of a topology for one schedule (what the closed forms take), and the
// intra/inter-node parameters of the hierarchical model.
#include "sim/effective_params.h"

#include "collectives/core/errors.h"

#include <algorithm>
#include <bit>
#include <map>
#include <stdexcept>

#include "collectives/plan/binary_tree.h"
#include "collectives/plan/node_tree.h"

namespace cclab::sim {
namespace {

using plan::Algorithm;
using plan::Collective;
using Pairs = std::vector<std::pair<int, int>>;  // (src, dst), all in flight at once

// α and β of a set of concurrent messages: β the largest inverse bandwidth of a resource times the
// messages crossing it (routes are counted as they are found, one search per source, and not kept: a
// 1M-rank cluster's 8 ring channels are 8M routes). α is the largest route latency, or with
// `meanLatency` (rings and chains) the mean: a ring's critical path is one hop per step through
// consecutive edges, so its 2(p-1) steps cross each edge about twice, not the slowest one every time (on
// a cluster ring one edge in G crosses a NIC; charging every step the NIC's latency made the closed form
// prefer LL where the replay takes Simple).
CostParams ofPairs(const Topology& topo, Pairs pairs, bool meanLatency = false) {
  CostParams k;
  std::sort(pairs.begin(), pairs.end());
  std::vector<int> flows(topo.resources().size(), 0);
  std::vector<int> dsts;
  double sum = 0, betaSum = 0;
  std::size_t nroutes = 0;
  for (std::size_t i = 0; i < pairs.size();) {
    const int s = pairs[i].first;
    dsts.clear();
    for (; i < pairs.size() && pairs[i].first == s; ++i) dsts.push_back(pairs[i].second);
    for (const Route& r : topo.routesFrom(topo.rankNode(s), dsts)) {
      // A message across a NIC waits for the host proxy (compute.proxy_us) on each latency traversal,
      // as the replay charges it (replay.cc, connectionId).
      bool nic = false;
      MicrosPerByte aloneBeta = 0;  // the route's bottleneck, the message alone on it
      for (int id : r.resources) {
        ++flows[static_cast<std::size_t>(id)];
        aloneBeta = std::max(aloneBeta, inverseBandwidth(topo.resources()[static_cast<std::size_t>(id)].bandwidth));
        nic = nic || topo.isNic(id);
      }
      const Micros latency = r.latency + (nic ? topo.spec().compute.proxyLatency : 0.0);
      k.alpha = std::max(k.alpha, latency);
      k.betaHop = std::max(k.betaHop, aloneBeta);
      sum += latency;
      betaSum += aloneBeta;
      ++nroutes;
    }
  }
  for (std::size_t id = 0; id < flows.size(); ++id)
    if (flows[id] != 0) k.beta = std::max(k.beta, inverseBandwidth(topo.resources()[id].bandwidth) * flows[id]);
  // A ring: its chain at the means of each message alone on its route (channels that share a resource
  // take turns on it while the others wait for latency), beta its busiest resource's share
  // (analytic_ring.cc). With one flow per resource the two are the same (uniform: the forms as before).
  if (meanLatency && nroutes > 0) {
    k.alpha = sum / static_cast<double>(nroutes);
    k.chainBeta = betaSum / static_cast<double>(nroutes);
  }
  return k;  // start-up (the launch) is added by the caller
}

void addTree(Pairs& up, const plan::BinaryTree& t) {
  for (int r = 0; r < static_cast<int>(t.nodes.size()); ++r)
    if (t.nodes[r].parent >= 0) up.emplace_back(r, t.nodes[r].parent);
}

// NCCL's tree (node_tree.h): every channel's edges both ways at once (its up and down lanes run
// concurrently), each channel with its own heads and node tree.
CostParams treePattern(const Topology& topo, int p, plan::PlanShape shape, int channels) {
  Pairs both;
  for (int ch = 0; ch < channels; ++ch) {
    const plan::NodeTree t = plan::nodeTree(p, shape.ranksPerNode, shape.nicsPerNode, ch);
    for (int r = 0; r < p; ++r)
      if (const int par = t.parent[static_cast<std::size_t>(r)]; par >= 0) {
        both.emplace_back(r, par);
        both.emplace_back(par, r);
      }
  }
  return ofPairs(topo, both);
}

}  // namespace

CostParams effectiveParams(const Topology& topo, Collective c, Algorithm a, int p, plan::PlanShape shape) {
  if (p > topo.nranks())
    throw InvalidArgument("effectiveParams: " + std::to_string(p) + " ranks on a topology of " + std::to_string(topo.nranks()));
  CostParams k;
  const bool chain = a == Algorithm::Ring || a == Algorithm::Chain;
  const int C = std::max(1, shape.channels);
  const int copies = c == Collective::AllReduce && a == Algorithm::DoubleBinaryTree ? (C + 1) / 2 : C;
  if (p > 1 && C > 1) {
    // Every channel at once: the one-channel pattern, or for rings each channel's own order.
    Pairs all;
    if (c == Collective::AllReduce && a == Algorithm::Tree) {
      k = treePattern(topo, p, shape, C);
    } else if (a == Algorithm::Ring && !plan::isRooted(c)) {
      for (int ch = 0; ch < C; ++ch) {
        const auto order = plan::ringOrder(p, shape.ranksPerNode, ch, shape.nicsPerNode);
        for (int v = 0; v < p; ++v) all.emplace_back(order[v], order[(v + 1) % p]);
      }
      k = ofPairs(topo, std::move(all), true);
    } else {
      // The one-channel pattern's flows times `copies`: β scales, α does not.
      k = effectiveParams(topo, c, a, p);
      k.beta *= copies;
      if (k.chainBeta >= 0) k.chainBeta *= copies;
      k.startup -= topo.spec().compute.launchLatency;
    }
  } else if (p > 1) {
    if (c == Collective::AllReduce && a == Algorithm::HalvingDoubling) {
      const int q = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
      const int e = p - q;
      auto rankOf = [&](int id) { return id < e ? 2 * id : id + e; };
      for (int mask = 1; mask < q; mask *= 2) {
        Pairs step;
        for (int v = 0; v < q; ++v) step.emplace_back(rankOf(v), rankOf(v ^ mask));
        const CostParams s = ofPairs(topo, step);
        k.alpha = std::max(k.alpha, s.alpha);
        k.beta = std::max(k.beta, s.beta);
      }
    } else if (c == Collective::AllReduce && a == Algorithm::Tree) {
      k = treePattern(topo, p, shape, 1);
    } else if (c == Collective::AllReduce && a == Algorithm::FlatTree) {
      Pairs up;
      addTree(up, plan::inOrderTree(p));
      k = ofPairs(topo, up);
    } else if (c == Collective::AllReduce && a == Algorithm::DoubleBinaryTree) {
      Pairs up;
      addTree(up, plan::inOrderTree(p));
      addTree(up, plan::shiftedInOrderTree(p, 1));
      k = ofPairs(topo, up);
    } else if (c == Collective::AllReduce && (a == Algorithm::OneShot || a == Algorithm::TwoShot)) {
      Pairs all;  // every rank to every other at once
      for (int r = 0; r < p; ++r)
        for (int q = 0; q < p; ++q)
          if (q != r) all.emplace_back(r, q);
      k = ofPairs(topo, all);
    } else if (plan::isRooted(c) && !chain) {
      Pairs up;
      addTree(up, plan::heapTree(p, 0));
      k = ofPairs(topo, up);
    } else {  // rings and chains: r -> r+1
      Pairs ring;
      for (int r = 0; r < p; ++r) ring.emplace_back(r, (r + 1) % p);
      k = ofPairs(topo, ring, true);
    }
  }
  k.gamma = topo.reduceCost();
  k.delta = topo.copyCost();
  k.startup += topo.spec().compute.launchLatency;
  return k;
}

CostParams withProtocol(CostParams k, Protocol p) {
  const ProtocolCost cost = costOf(p);
  k.alpha *= cost.traversals;
  k.beta *= cost.stretch;
  k.betaHop *= cost.stretch;
  if (k.chainBeta >= 0) k.chainBeta *= cost.stretch;
  return k;
}

HierarchicalParams hierarchicalParams(const Topology& topo, int channels) {
  const auto& s = topo.spec();
  if (s.kind != TopologyKind::Cluster) throw InvalidArgument("hierarchical algorithms need a cluster topology (got kind '" + std::string(name(s.kind)) + "')");
  const int G = s.gpusPerNode, N = s.nodes;
  HierarchicalParams h;
  Pairs intra, inter;
  for (int g = 0; g < G; ++g) intra.emplace_back(g, (g + 1) % G);
  if (G > 1) h.intra = ofPairs(topo, intra);
  if (N > 1) {
    for (int g = 0; g < G; ++g) inter.emplace_back(g, G + g);  // every GPU of node 0 to its peer on node 1
    h.inter = ofPairs(topo, inter);
  }
  h.intra.beta *= std::max(1, channels);
  h.inter.beta *= std::max(1, channels);
  h.intra.gamma = h.inter.gamma = topo.reduceCost();
  h.intra.delta = h.inter.delta = topo.copyCost();
  h.intra.startup = 0;
  h.inter.startup = topo.spec().compute.launchLatency;  // the NIC proxy is in h.inter.alpha (per message)
  return h;
}

Prediction predictOn(const Topology& topo, const Schedule& s, plan::PlanShape shape, ProtocolChoice protocol) {
  return predictOn(topo, effectiveParams(topo, s.collective, s.algorithm, s.nranks, shape), s, shape, protocol);
}

Prediction predictOn(const Topology& topo, const CostParams& k, const Schedule& s, plan::PlanShape shape, ProtocolChoice protocol) {
  const int C = std::max(1, shape.channels);
  const bool dbtree = s.collective == Collective::AllReduce && s.algorithm == Algorithm::DoubleBinaryTree;
  const int lanes = dbtree ? std::max(2, C + C % 2) : C;   // makePlan's channel count
  Schedule one = s;
  one.count = dbtree ? s.count * 2 / lanes : s.count / lanes;  // dbtree: the closed form halves it again
  return fastestProtocol(protocolCandidates(topo.spec(), protocol), [&](Protocol p) { return predict(one, withProtocol(k, p)); });
}

}  // namespace cclab::sim
