// Double binary tree allreduce (Sanders, Speck & Träff 2009; NCCL 2.4): two binary trees, each
// reducing and broadcasting half of the data. The second tree is the first shifted by one rank, so a
// rank that is a leaf in one is an interior node in the other (exactly so for even nranks), and each
// rank sends and receives about n/2 per direction per phase instead of n.
//
// The two trees are two channels (channels.cc): channel 0 runs the in-order tree on the lower half,
// channel 1 this file's shifted tree on the upper half, each phase 0 up and phase 1 down, so each tree
// pipelines on its own (as NCCL's two tree channels do). With more channels, channel c runs tree c mod 2.
// Cost: 2(d + S - 1)(α + n/(2S)·β) + n·γ: the tree's latency with half its bandwidth term.
#include "collectives/plan/tree_allreduce_ops.h"

namespace cclab::plan {

Plan allReduceShiftedTree(int nranks, std::int64_t count) {
  Plan plan = build::emptyPlan(Collective::AllReduce, Algorithm::DoubleBinaryTree, nranks, count, 0, 2);
  const BinaryTree tree = shiftedInOrderTree(nranks, 1);
  build::treeReduceUp(plan, tree, {0, count}, 0);
  build::treeBroadcastDown(plan, tree, {0, count}, 1);
  return plan;
}

Plan allReduceDoubleBinaryTree(int nranks, std::int64_t count) {
  return makePlan(Collective::AllReduce, Algorithm::DoubleBinaryTree, nranks, count);
}

}  // namespace cclab::plan
