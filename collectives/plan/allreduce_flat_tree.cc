// Flat tree allreduce ("flat-tree"): reduce up one binary tree (inOrderTree) over all ranks, nodes
// ignored, then broadcast down it. The double binary tree (allreduce_dbtree.cc) runs it as its first
// tree; "tree" is NCCL's tree (allreduce_tree.cc).
//
// Phase 0 carries the reduction to the root, phase 1 the result back down; inside each phase an
// executor pipelines slices, so a rank forwards slice s while its children work on slice s+1.
//
// Cost (pipelined, d = tree depth, S slices): 2(d + S - 1)(α + n/S·β) + n·γ per level; for large n
// it tends to 2nβ (each link carries the full vector once each way), for small n to 2dα.
#include "collectives/plan/tree_allreduce_ops.h"

namespace cclab::plan {

Plan allReduceFlatTree(int nranks, std::int64_t count) {
  Plan plan = build::emptyPlan(Collective::AllReduce, Algorithm::FlatTree, nranks, count, 0, 2);
  const BinaryTree tree = inOrderTree(nranks);
  build::treeReduceUp(plan, tree, {0, count}, 0);
  build::treeBroadcastDown(plan, tree, {0, count}, 1);
  return plan;
}

}  // namespace cclab::plan
