// Hierarchical allreduce on nodes x gpus (analytic only; NCCL's CollNet/"tree within, ring across"
// idea, and the 2D/hierarchical ring of Jia et al. 2018, "Highly Scalable Deep Learning Training
// System with Mixed-Precision"):
//   1. ring reduce-scatter among the G GPUs of a node:   (G-1)α₁ + (G-1)/G·nβ₁ + (G-1)/G·nγ
//   2. G allreduces of n/G bytes across the N nodes, in parallel, each over its share of the NICs:
//        ring: 2(N-1)α₂ + 2(N-1)/N·(n/G)β₂ + (N-1)/N·(n/G)γ     tree: treeAllReduce(N, n/G)
//   3. ring allgather among the G GPUs:                   (G-1)α₁ + (G-1)/G·nβ₁
// with β₂ the inverse of one GPU's share of its node's NIC bandwidth.
#include "sim/analytic.h"

namespace cclab::sim {

Micros hierarchicalAllReduce(int nodes, int gpus, Bytes n, plan::Algorithm inter, const HierarchicalParams& h) {
  const Bytes shard = n / gpus;
  Micros t = 0;
  if (gpus > 1) t += ringReduceScatter(gpus, shard, 1, h.intra) + ringAllGather(gpus, shard, 1, h.intra);
  if (nodes > 1) {
    if (inter == plan::Algorithm::Tree)
      t += treeAllReduce(nodes, shard, 1, h.inter);
    else
      t += ringAllReduce(nodes, shard / nodes, 1, h.inter);
  }
  // One GPU and one node: the result is a local copy.
  if (gpus == 1 && nodes == 1) t = static_cast<double>(n) * h.intra.delta;
  return t;
}

}  // namespace cclab::sim
