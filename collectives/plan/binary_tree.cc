#include "collectives/plan/binary_tree.h"

#include <bit>

namespace cclab::plan {
namespace {

unsigned lowBit(unsigned x) { return x & (~x + 1U); }

// Parent position of x (1-based) in the infinite in-order tree.
unsigned bitParent(unsigned x) {
  const unsigned b = lowBit(x);
  return (x & ~b) | (2 * b);
}

}  // namespace

BinaryTree inOrderTree(int n) { return shiftedInOrderTree(n, 0); }

BinaryTree shiftedInOrderTree(int n, int shift) {
  BinaryTree t;
  t.nodes.resize(static_cast<std::size_t>(n));
  if (n <= 0) return t;
  const auto un = static_cast<unsigned>(n);
  const unsigned rootPos = std::bit_floor(un);
  auto rankAt = [&](unsigned pos) { return static_cast<int>(((pos - 1) + static_cast<unsigned>(n - shift % n)) % un); };
  for (unsigned x = 1; x <= un; ++x) {
    const int r = rankAt(x);
    if (x == rootPos) {
      t.root = r;
    } else {
      unsigned par = bitParent(x);
      while (par > un) par = bitParent(par);  // climb past positions that do not exist
      t.nodes[r].parent = rankAt(par);
    }
  }
  for (int r = 0; r < n; ++r) {
    const int par = t.nodes[r].parent;
    if (par < 0) continue;
    auto& c = t.nodes[par].child;
    (c[0] < 0 ? c[0] : c[1]) = r;
  }
  return t;
}

BinaryTree heapTree(int n, int root) {
  BinaryTree t;
  t.nodes.resize(static_cast<std::size_t>(n));
  t.root = root;
  auto rank = [&](int v) { return (v + root) % n; };
  for (int v = 0; v < n; ++v) {
    if (v > 0) t.nodes[rank(v)].parent = rank((v - 1) / 2);
    for (int i = 0; i < 2; ++i)
      if (2 * v + 1 + i < n) t.nodes[rank(v)].child[i] = rank(2 * v + 1 + i);
  }
  return t;
}

}  // namespace cclab::plan
