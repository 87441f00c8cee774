#include "collectives/plan/node_tree.h"

#include "collectives/plan/binary_tree.h"
#include "collectives/plan/nic_layout.h"

namespace cclab::plan {

namespace {
int nodeSize(int nranks, int g) { return g <= 0 || g >= nranks || nranks % g != 0 ? nranks : g; }
}  // namespace

int nodeTreeIndex(int channel, int ranksPerNode, int nicsPerNode) {
  const int K = nics::effective(ranksPerNode, nicsPerNode);
  return (channel + (K % 2 == 0 ? channel / K : 0)) % 2;
}

NodeTree nodeTree(int nranks, int ranksPerNode, int nicsPerNode, int channel) {
  NodeTree t;
  const auto n = static_cast<std::size_t>(nranks);
  t.parent.assign(n, -1);
  t.child.assign(n, {-1, -1, -1});
  t.chain.assign(n, 0);
  if (nranks <= 0) return t;
  const int g = nodeSize(nranks, ranksPerNode), N = nranks / g;
  const int K = nics::effective(g, g == ranksPerNode ? nicsPerNode : 0);
  const int head = nics::portsOf(channel, g, K).entry;
  auto rankOf = [&](int node, int index) { return node * g + (head + index) % g; };
  for (int node = 0; node < N; ++node)
    for (int i = 0; i < g; ++i) {
      const int r = rankOf(node, i);
      t.chain[static_cast<std::size_t>(r)] = i;
      if (i > 0) t.parent[static_cast<std::size_t>(r)] = rankOf(node, i - 1);
      if (i + 1 < g) t.child[static_cast<std::size_t>(r)][0] = rankOf(node, i + 1);
    }
  const BinaryTree nodes = nodeTreeIndex(channel, g, K) == 0 ? inOrderTree(N) : shiftedInOrderTree(N, 1);
  t.root = rankOf(nodes.root, 0);
  for (int node = 0; node < N; ++node) {
    const auto& nd = nodes.nodes[static_cast<std::size_t>(node)];
    const int h = rankOf(node, 0);
    if (nd.parent >= 0) t.parent[static_cast<std::size_t>(h)] = rankOf(nd.parent, 0);
    for (int j = 0; j < 2; ++j)
      if (nd.child[static_cast<std::size_t>(j)] >= 0)
        t.child[static_cast<std::size_t>(h)][static_cast<std::size_t>(1 + j)] = rankOf(nd.child[static_cast<std::size_t>(j)], 0);
  }
  return t;
}

}  // namespace cclab::plan
