// Hierarchical allreduce on N nodes x G GPUs (collectives/plan/allreduce_hierarchical.cc, "hier";
// the 2D/hierarchical ring of Jia et al. 2018, "Highly Scalable Deep Learning Training System with
// Mixed-Precision", and NCCL's multi-node ring idea).
//
// hier-ring is the plan's schedule: three phases, each a ring pipelined in slices (slice-major: slice
// round s runs every step of the phase for slice s before round s+1 starts, as the ring's rounds do,
// analytic_ring.cc). Shard = n/G with R₁ slice rounds (b₁ = n/(G·R₁)); piece = n/(GN) with R₂ rounds
// (b₂ = n/(GN·R₂)):
//   0. ring reduce-scatter in the node, one whole shard per step:   R₁·(G-1)·(α₁ + b₁β₁ + b₁γ)
//   1. ring allreduce of the rank's shard across the nodes, one piece per step (one ring per local
//      rank, each through its own NIC):                            R₂·(N-1)·[(α₂ + b₂β₂ + b₂γ) + (α₂ + b₂β₂)]
//   2. ring allgather in the node, one whole shard per step:        R₁·(G-1)·(α₁ + b₁β₁)
// Derivation: in each phase every rank runs the same steps on its own shard or piece at the same
// time (the plan is symmetric under n·g + l -> n·g + l+1 and under n -> n+1), so every rank is in
// lockstep with its ring neighbours; a step's receive completes one latency plus one slice's wire
// time after the neighbour's send (the send costs the sender nothing), then the receiver reduces the
// slice (γ) before its next send; no two messages of a phase share a resource (a rank's NVSwitch port
// and its NIC are separate, one message per port at a time), and a rank starts phase k+1 right after
// its last step of phase k, when its neighbours start theirs. Summing the three phases:
//   T = 2(G-1)R₁α₁ + 2(N-1)R₂α₂ + 2(G-1)/G·nβ₁ + 2(N-1)/(NG)·nβ₂ + ((G-1)/G + (N-1)/(NG))·nγ,
// equal to replay where shards, pieces and slices split evenly (tests/sim/closed_form_test.cc,
// link_class_test.cc). The node-ring latency 2(G-1)R₁α₁ does not grow with N (the plan before this one
// moved every shard as N pieces: 2(G-1)·N·R·α₁). N = 1 or G = 1 is the flat ring (the plan is then the
// ring). With C channels each runs this on n/C concurrently and they share ports (replay only).
// hier-tree (analytic only: no plan exists) keeps the unpipelined form: ring reduce-scatter in the
// node, treeAllReduce of the n/G shard across the nodes, ring allgather in the node.
// β₂ is the inverse of one GPU's share of its node's NIC bandwidth (effective_params.h).
#include "sim/analytic.h"

#include <algorithm>

namespace cclab::sim {

Micros hierarchicalAllReduce(int nodes, int gpus, Bytes n, HierarchicalRounds rounds, plan::Algorithm inter,
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
  const double G = gpus, N = nodes, R1 = static_cast<double>(rounds.shard), R2 = static_cast<double>(rounds.piece);
  const int B = static_cast<int>(std::max<std::int64_t>(rounds.blocks, 1));
  const double b1 = nb / B / G / R1, b2 = nb / B / (G * N) / R2;
  // One block's three parts, each a ring in lockstep (see the derivation above).
  const double scatter = R1 * (G - 1) * (k1.alpha + b1 * k1.beta + b1 * k1.gamma);
  const double gather = R1 * (G - 1) * (k1.alpha + b1 * k1.beta);
  const double network = R2 * (N - 1) * ((k2.alpha + b2 * k2.beta + b2 * k2.gamma) + (k2.alpha + b2 * k2.beta));
  // Stage t = phase t of both lanes; both start it when both have ended stage t-1 (the deps), so a
  // stage lasts as long as its slower lane: the node lane's reduce-scatter of block t and allgather of
  // block t-2, or the network lane's allreduce of block t-1.
  Micros t = 0;
  for (int stage = 0; stage <= B + 1; ++stage) {
    const double node = (stage < B ? scatter : 0.0) + (stage >= 2 ? gather : 0.0);
    const double net = stage >= 1 && stage <= B ? network : 0.0;
    t += std::max(node, net);
  }
  return t;
}

}  // namespace cclab::sim
