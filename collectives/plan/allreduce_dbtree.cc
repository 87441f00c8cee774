// Double binary tree allreduce (Sanders, Speck & Träff 2009; NCCL 2.4): two binary trees, each
// reducing and broadcasting half of the data. The second tree is the first shifted by one rank, so a
// rank that is a leaf in one is an interior node in the other (exactly so for even nranks), and each
// rank sends and receives about n/2 per direction per phase instead of n.
//
// Phase 0 reduces both halves up their trees, phase 1 broadcasts them down; slices pipeline in each.
// Cost: 2(d + S - 1)(α + n/(2S)·β) + n·γ: the tree's latency with half its bandwidth term.
#include "collectives/plan/tree_allreduce_ops.h"

namespace cclab::plan {

Plan allReduceDoubleBinaryTree(int nranks, std::int64_t count) {
  Plan plan = build::emptyPlan(Collective::AllReduce, Algorithm::DoubleBinaryTree, nranks, count, 0, 2);
  const BinaryTree first = inOrderTree(nranks), second = shiftedInOrderTree(nranks, 1);
  const Chunk lower = chunkOf(count, 2, 0), upper = chunkOf(count, 2, 1);
  build::treeReduceUp(plan, first, lower, 0);
  build::treeReduceUp(plan, second, upper, 0);
  build::treeBroadcastDown(plan, first, lower, 1);
  build::treeBroadcastDown(plan, second, upper, 1);
  return plan;
}

}  // namespace cclab::plan
