// Reduce up a binary tree and broadcast down it, over one element range: shared by the tree and
// double-binary-tree allreduce generators (internal to collectives/plan).
#pragma once

#include "collectives/plan/binary_tree.h"
#include "collectives/plan/builder.h"

namespace cclab::plan::build {

// Up: a rank reduces each child's partial sum into its output (the first with its own input), then
// sends the result to its parent; a leaf sends its input.
inline void treeReduceUp(Plan& plan, const BinaryTree& tree, Chunk part, int phase) {
  for (int r = 0; r < plan.nranks; ++r) {
    Ops ops(plan, r);
    const auto& node = tree.nodes[r];
    const Range mine = in(part.offset, part.count), result = out(part.offset, part.count);
    bool reduced = false;
    for (int c : node.child) {
      if (c < 0) continue;
      ops.recvReduce(c, reduced ? result : mine, result, phase);
      reduced = true;
    }
    if (node.parent >= 0)
      ops.send(node.parent, reduced ? result : mine, phase);
    else if (!reduced)
      ops.copy(mine, result, phase);  // a root without children: one rank
  }
}

// Down: a rank receives the full result from its parent into its output and sends it on.
inline void treeBroadcastDown(Plan& plan, const BinaryTree& tree, Chunk part, int phase) {
  for (int r = 0; r < plan.nranks; ++r) {
    Ops ops(plan, r);
    const auto& node = tree.nodes[r];
    const Range result = out(part.offset, part.count);
    if (node.parent >= 0) ops.recv(node.parent, result, phase);
    for (int c : node.child)
      if (c >= 0) ops.send(c, result, phase);
  }
}

}  // namespace cclab::plan::build
