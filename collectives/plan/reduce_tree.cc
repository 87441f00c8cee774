// Pipelined binary-tree reduce towards root (heapTree): each rank reduces its children's slices with
// its input and forwards the result to its parent; non-root partial sums live in scratch. One phase.
//
// Cost: (d + S-1)(α + 2n/S·β) + 2nγ per interior rank, d = floor(log2 p).
#include "collectives/plan/binary_tree.h"
#include "collectives/plan/builder.h"

namespace cclab::plan {

Plan reduceTree(int nranks, std::int64_t count, int root) {
  Plan plan = build::emptyPlan(Collective::Reduce, Algorithm::Tree, nranks, count, root);
  plan.scratchCount = nranks > 2 ? count : 0;
  const BinaryTree tree = heapTree(nranks, root);
  for (int r = 0; r < nranks; ++r) {
    build::Ops ops(plan, r);
    const auto& node = tree.nodes[r];
    const bool isRoot = node.parent < 0;
    const Range mine = build::in(0, count);
    const Range acc = isRoot ? build::out(0, count) : build::scratch(0, count);
    bool reduced = false;
    for (int c : node.child) {
      if (c < 0) continue;
      ops.recvReduce(c, reduced ? acc : mine, acc, 0);
      reduced = true;
    }
    if (!isRoot)
      ops.send(node.parent, reduced ? acc : mine, 0);
    else if (!reduced)
      ops.copy(mine, acc, 0);
  }
  return plan;
}

}  // namespace cclab::plan
