// Hierarchical allreduce on N nodes x G GPUs (collectives/plan/allreduce_hierarchical.cc, "hier";
// the 2D/hierarchical ring of Jia et al. 2018, "Highly Scalable Deep Learning Training System with
// Mixed-Precision", and NCCL's multi-node ring idea).
//
// hier-ring is the plan's schedule: per part of the data, a node lane (node-ring reduce-scatter and
// allgather of whole shards) and a network lane (ring allreduce of pieces across the nodes), pipelined
// over B blocks (plan::hierarchicalBlocks) and linked by phase deps (hierarchical_schedule.h). Every
// group of ops is a ring pipelined in slices (slice-major: slice round s runs every step of the phase
// for slice s before round s+1 starts, as the ring's rounds do, analytic_ring.cc). Per block: shard =
// n/(BG) with R₁ slice rounds (b₁ = n/(BG·R₁)), piece = n/(BGN) with R₂ rounds (b₂ = n/(BGN·R₂)):
//   RS = R₁·(G-1)·(α₁ + b₁β₁ + b₁γ)                     node-ring reduce-scatter of one block
//   AG = R₁·(G-1)·(α₁ + b₁β₁)                           node-ring allgather of one block
//   AR = R₂·(N-1)·[(α₂ + b₂β₂ + b₂γ) + (α₂ + b₂β₂)]     network-ring allreduce of one block's pieces
// Stage t (t = 0..B+1) is phase t of both lanes: the node lane runs RS of block t (t < B) and AG of
// block t-2 (t >= 2), the network lane AR of block t-1 (1 <= t <= B). The deps make each lane start
// stage t when both lanes have ended stage t-1, so
//   T = Σ_{t=0}^{B+1} max(node_t, net_t),  node_t = [t<B]·RS + [t>=2]·AG,  net_t = [1<=t<=B]·AR,
// i.e. fill (RS of block 0) + B stages of the slower lane's work + drain (AG of block B-1); B = 1 is
// the three phases one after the other (RS + AR + AG, as a plan without the pipelined lanes runs them).
// Derivation of each term: in each group every rank runs the same steps on its own shard or piece at
// the same time (the plan is symmetric under n·g + l -> n·g + l+1 and under n -> n+1), so every rank
// is in lockstep with its ring neighbours; a step's receive completes one latency plus one slice's
// wire time after the neighbour's send (the send costs the sender nothing), then the receiver reduces
// the slice (γ) before its next send; no two messages share a resource (a rank's NVSwitch port and
// its NIC are separate, one message per port at a time). Replay equals T where shards, pieces and
// slices split evenly and the two lanes' reductions do not meet at the rank's one compute: with B = 1
// (no stage has both lanes) at any γ, with B >= 2 where γ = 0 (tests/sim/closed_form_test.cc,
// link_class_test.cc); otherwise the lanes take turns at the compute and replay is a little slower
// (the cluster preset's γ, 1/3350 GB/s, 2 nodes, 4 blocks, one channel: 0.07%). N = 1 or G = 1 is
// the flat ring (the plan is then the ring). With C channels each part runs this on n/C concurrently
// and they share ports (replay only).
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
