// Binary trees over ranks, for the tree-based generators.
#pragma once

#include <array>
#include <vector>

namespace cclab::plan {

struct BinaryTree {
  struct Node {
    int parent = -1;                 // -1 at the root
    std::array<int, 2> child{-1, -1};  // -1 where absent
  };
  int root = 0;
  std::vector<Node> nodes;  // indexed by rank
};

// In-order ("bit") tree on ranks 0..n-1, as NCCL builds its trees: rank r sits at position x = r+1,
// the lowest set bit of x gives its height, so odd positions are leaves and the root is the highest
// power of two <= n. Depth is ceil(log2(n+1)) - 1.
BinaryTree inOrderTree(int n);

// The same tree with rank r moved to position (r + shift) mod n: with shift 1 the leaves of
// inOrderTree(n) are interior nodes here (n even), which is the double binary tree's second tree.
BinaryTree shiftedInOrderTree(int n, int shift);

// Heap-shaped tree rooted at `root`: v = (r - root) mod n has parent (v-1)/2 and children 2v+1, 2v+2.
BinaryTree heapTree(int n, int root);

}  // namespace cclab::plan
