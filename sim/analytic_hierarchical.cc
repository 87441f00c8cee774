// Hierarchical allreduce on N nodes x G GPUs (collectives/plan/allreduce_hierarchical.cc, "hier";
// the 2D/hierarchical ring of Jia et al. 2018, "Highly Scalable Deep Learning Training System with
// Mixed-Precision", and NCCL's multi-node ring idea).
//
// hier-ring is the plan's schedule: the data is cut into G shards of N pieces (piece = n/(GN) bytes,
// b = piece/R with R slice rounds per piece), one phase, so slice round s runs the whole schedule for
// slice s of every piece before round s+1 starts (as the ring's rounds do, analytic_ring.cc):
//   1. ring reduce-scatter in the node, every shard as its N pieces:  (G-1)·N·(α₁ + bβ₁ + bγ)
//   2. ring allreduce of the rank's shard across the nodes, piece by piece (one ring per local rank,
//      each through its own NIC):  (N-1)(α₂ + bβ₂ + bγ) + (N-1)(α₂ + bβ₂)
//   3. ring allgather in the node:  (G-1)·N·(α₁ + bβ₁)
//   T = R × (1 + 2 + 3) = 2(G-1)NRα₁ + 2(N-1)Rα₂ + 2(G-1)/G·nβ₁ + 2(N-1)/(NG)·nβ₂ + ((G-1)/G + (N-1)/(NG))·nγ
// Every rank is in lockstep with its neighbours and no two messages share a link (a rank's NVSwitch
// port and its NIC are separate), so this equals replay where pieces and slices split evenly
// (tests/sim/closed_form_test.cc). N = 1 or G = 1 is the flat ring (the plan is then the ring).
// hier-tree (analytic only: no plan exists) keeps the unpipelined form: ring reduce-scatter in the
// node, treeAllReduce of the n/G shard across the nodes, ring allgather in the node.
// β₂ is the inverse of one GPU's share of its node's NIC bandwidth (effective_params.h).
#include "sim/analytic.h"

namespace cclab::sim {

Micros hierarchicalAllReduce(int nodes, int gpus, Bytes n, std::int64_t rounds, plan::Algorithm inter,
                             const HierarchicalParams& h) {
  const double nb = static_cast<double>(n);
  if (gpus == 1 && nodes == 1) return nb * h.intra.delta;  // one rank: a local copy
  const CostParams &k1 = h.intra, &k2 = h.inter;
  if (inter == plan::Algorithm::Tree) {
    const Bytes shard = n / gpus;
    Micros t = 0;
    if (gpus > 1) t += ringReduceScatter(gpus, shard, 1, k1) + ringAllGather(gpus, shard, 1, k1);
    if (nodes > 1) t += treeAllReduce(nodes, shard, 1, k2);
    return t;
  }
  const double G = gpus, N = nodes, R = static_cast<double>(rounds);
  const double b = nb / (G * N) / R;
  const double intra = (G - 1) * N * ((k1.alpha + b * k1.beta + b * k1.gamma) + (k1.alpha + b * k1.beta));
  const double across = (N - 1) * ((k2.alpha + b * k2.beta + b * k2.gamma) + (k2.alpha + b * k2.beta));
  return R * (intra + across);
}

}  // namespace cclab::sim
