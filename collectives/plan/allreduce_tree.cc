// Tree allreduce as NCCL runs it ("tree"): per channel, a chain inside every node and a binary tree
// between the nodes' heads (node_tree.h: the double binary tree over nodes, each channel on one of
// its two trees, heads on the channel's NIC), with the reduction up and the broadcast down running
// concurrently, as NCCL's tree kernel splits its threads between the two directions.
//
// The two directions are two lanes of one part of the data (channels 0 and 1 of this plan; makePlan's
// C parts give 2C channels), and the part is cut into B blocks (treeBlocks):
//   up lane, phase t (block t):  a rank reduces its children's partial sums into its output (the
//     chain child first, then the child nodes' heads; the first with its own input), then sends the
//     result to its parent; a leaf sends its input;
//   down lane, phase t+1 (block t): a rank receives the result from its parent into its output and
//     sends it to its child nodes' heads, then its chain child.
// Deps: the down lane starts block t only once the up lane has finished block t (on the root, that is
// where the sum is complete; elsewhere it orders the two writes of the same output). So while the
// root broadcasts block t, the reduction of block t+1 is on its way up. Inside each phase an executor
// pipelines slices, so both directions stream.
//
// Cost (per channel part n, the longest up path h = chain length g-1 plus node depth d, slices of b):
// each rank sends n up (but the root) and n down (but the leaves), so each link direction inside a
// node carries n each way and each node's NIC carries n up or down per tree role; the time tends to
// the busiest resource's bytes over its bandwidth (sim/analytic_tree.cc gives the closed form).
#include <algorithm>

#include "collectives/plan/builder.h"
#include "collectives/plan/node_tree.h"

namespace cclab::plan {

namespace {
// Fewest elements in one block (a smaller block pays its pipeline's fill in latency for little more
// overlap) and most blocks: the down lane trails the up lane by one block at the root.
constexpr std::int64_t kMinTreeBlockElems = 65536;
constexpr int kUpLane = 0, kDownLane = 1;
}  // namespace

int treeBlocks(std::int64_t count) {
  return static_cast<int>(std::clamp<std::int64_t>(count / kMinTreeBlockElems, 1, kMaxTreeBlocks));
}

int treeBlocksOf(std::int64_t count, PlanShape shape) {
  if (shape.blocks > 0) return std::min(shape.blocks, kMaxTreeBlocks);
  const int channels = std::max(shape.channels, 1);
  return treeBlocks(chunkOf(count, channels, channels - 1).count);
}

Plan allReduceTree(int nranks, std::int64_t count, int ranksPerNode, int nicsPerNode, int channel, int blocks) {
  if (blocks < 1) blocks = treeBlocks(count);
  Plan plan = build::emptyPlan(Collective::AllReduce, Algorithm::Tree, nranks, count, 0, blocks + 1);
  plan.nchannels = 2;
  for (int t = 0; t < blocks; ++t) plan.deps.push_back({kDownLane, t + 1, kUpLane, t});
  const NodeTree tree = nodeTree(nranks, ranksPerNode, nicsPerNode, channel);
  for (int r = 0; r < nranks; ++r) {
    build::Ops up(plan, r, kUpLane), down(plan, r, kDownLane);
    const auto& kids = tree.child[static_cast<std::size_t>(r)];
    const int parent = tree.parent[static_cast<std::size_t>(r)];
    for (int t = 0; t < blocks; ++t) {  // a rank's list holds its up lane's ops, then its down lane's
      const Chunk b = chunkOf(count, blocks, t);
      const Range mine = build::in(b.offset, b.count), result = build::out(b.offset, b.count);
      bool reduced = false;
      for (int c : kids) {
        if (c < 0) continue;
        up.recvReduce(c, reduced ? result : mine, result, t);
        reduced = true;
      }
      if (parent >= 0)
        up.send(parent, reduced ? result : mine, t);
      else if (!reduced)
        up.copy(mine, result, t);  // one rank
    }
    for (int t = 0; t < blocks; ++t) {
      const Chunk b = chunkOf(count, blocks, t);
      const Range result = build::out(b.offset, b.count);
      if (parent >= 0) down.recv(parent, result, t + 1);
      for (int j : {1, 2, 0})
        if (kids[static_cast<std::size_t>(j)] >= 0) down.send(kids[static_cast<std::size_t>(j)], result, t + 1);
    }
  }
  return plan;
}

}  // namespace cclab::plan
