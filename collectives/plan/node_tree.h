// NCCL's tree of ranks for one channel (internal to collectives/plan; the simulator's closed forms read
// it too): a chain inside every node and a binary tree between the nodes' heads.
//
// Ranks n·g .. n·g+g-1 are node n (g = ranksPerNode; 0, g >= nranks or g not dividing nranks: one
// node of every rank). Channel c's head on every node is its entry GPU on NIC c mod K
// (nic_layout.h); the node's chain runs head, head+1, ... (local indices, cyclically), each rank's
// parent the one before it. The heads form a binary tree over node indices (NCCL's double binary
// tree, src/graph/trees.cc: two complementary trees, each channel using one): tree 0 is inOrderTree(N),
// tree 1 the same shifted by one node (shiftedInOrderTree(N, 1)), so a node that is a leaf in one is
// interior in the other. Channel c uses tree (c + floor(c/K)) mod 2 when K is even, else c mod 2, so
// the channels on one NIC alternate trees where they can.
#pragma once

#include <array>
#include <vector>

namespace cclab::plan {

struct NodeTree {
  int root = 0;                          // the root node's head
  std::vector<int> parent;               // by rank; -1 at the root
  std::vector<std::array<int, 3>> child;  // by rank: the chain child, then the child nodes' heads; -1 absent
  std::vector<int> chain;                // by rank: its index in its node's chain (0: the head)
};

// The tree of channel `channel` on nranks ranks.
NodeTree nodeTree(int nranks, int ranksPerNode, int nicsPerNode, int channel);

// Which of the two node trees channel c uses (see above).
int nodeTreeIndex(int channel, int ranksPerNode, int nicsPerNode);

}  // namespace cclab::plan
