// Pipelined binary-tree broadcast from root (heapTree): each rank receives a slice from its parent
// and forwards it to its two children. One phase.
//
// Cost: (d + S-1)(α + 2n/S·β) with depth d = floor(log2 p): fewer hops than the chain, but each
// interior rank sends the data twice.
#include "collectives/plan/binary_tree.h"
#include "collectives/plan/builder.h"

namespace cclab::plan {

Plan broadcastTree(int nranks, std::int64_t count, int root) {
  Plan plan = build::emptyPlan(Collective::Broadcast, Algorithm::Tree, nranks, count, root);
  const BinaryTree tree = heapTree(nranks, root);
  for (int r = 0; r < nranks; ++r) {
    build::Ops ops(plan, r);
    const auto& node = tree.nodes[r];
    const bool isRoot = node.parent < 0;
    const Range from = isRoot ? build::in(0, count) : build::out(0, count);
    if (!isRoot) ops.recv(node.parent, build::out(0, count), 0);
    for (int c : node.child)
      if (c >= 0) ops.send(c, from, 0);
    if (isRoot) ops.copy(build::in(0, count), build::out(0, count), 0);
  }
  return plan;
}

}  // namespace cclab::plan
