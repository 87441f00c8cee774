// Binary-tree family: NCCL's tree allreduce (collectives/plan/allreduce_tree.cc, below), allreduce
// on one flat tree (allreduce_flat_tree.cc), on two trees
// (allreduce_dbtree.cc; Sanders, Speck & Träff 2009, NCCL 2.4), broadcast and reduce on a heap tree
// (broadcast_tree.cc, reduce_tree.cc).
//
// Both tree shapes have depth d = floor(log2 p), and along their deepest path every interior rank has
// two children except, when p is a power of two, the last one. A rank reduces its first child, then
// its second, then forwards, so with one slice per op (R = 1) the reduction up the tree costs
//   U = d(α + nβ) + (2d - [p = 2^d])·nγ
// and a broadcast down it d(α + nβ) (a rank sends to both children at once, on separate links).
//   allreduce (tree):   U + d(α + nβ)                                  (Patarasuk & Yuan 2009, §3)
//   reduce (tree):      U
//   broadcast (tree):   max(d(α + nβ), nδ)                             (the root copies after sending)
// Pipelined approximation for R > 1 slices of b = n/R: a tree is a pipeline of depth d whose slowest
// stage is the wire (bβ) or a rank reducing two children (2bγ):
//   up   ≈ d(α + bβ) + (2d - [p = 2^d])·bγ + (R-1)·max(bβ, 2bγ),  down ≈ d(α + bβ) + (R-1)·bβ
//   (broadcast: max(d(α + bβ) + (R-1)·max(bβ, bδ), R·bδ), exact).
// The double binary tree (allreduce_dbtree.cc) is two channels, one tree each on half the data
// (h = n/2), each with its own up and down phases, run concurrently (replay: one agent per
// (rank, channel)). The second tree is the first shifted by one rank, the same shape, so each costs
// the single-tree form on h:  T(dbtree, n) = T(tree, n/2).
// This assumes the two trees never wait for each other. They share two things: a rank's compute
// (replay serialises a rank's reductions across its channels) and, on a direct topology, a link
// direction when a rank's parent (or child) is the same in both trees. Neither lands on a critical
// path: replay equals this form to 1e-9 for p = 2..65, one slice or several, also with reduction 5x
// slower than the wire (tests/sim/closed_form_test.cc, DoubleBinaryTreeIsTheTreeOnHalfTheData).
#include <algorithm>
#include <bit>

#include "sim/analytic.h"

namespace cclab::sim {
namespace {

int depthOf(int p) { return std::bit_width(static_cast<unsigned>(p)) - 1; }
bool isPowerOfTwo(int p) { return std::has_single_bit(static_cast<unsigned>(p)); }

// Reduction up a tree of p ranks with R slices of b bytes.
Micros up(int p, double b, double R, const CostParams& k) {
  const int d = depthOf(p);
  const double reduces = 2.0 * d - (isPowerOfTwo(p) ? 1 : 0);
  const double perStage = p == 2 ? 1 : 2;  // reductions per slice at the busiest rank
  return d * (k.alpha + b * k.beta) + reduces * b * k.gamma + (R - 1) * std::max(b * k.beta, perStage * b * k.gamma);
}

Micros down(int p, double b, double R, const CostParams& k) {
  const int d = depthOf(p);
  return d * (k.alpha + b * k.beta) + (R - 1) * b * k.beta;
}

}  // namespace

Micros treeAllReduce(int p, Bytes n, std::int64_t rounds, const CostParams& k) {
  const double nb = static_cast<double>(n);
  if (p == 1) return nb * k.delta;
  const double R = static_cast<double>(rounds), b = nb / R;
  return up(p, b, R, k) + down(p, b, R, k);
}

// NCCL's tree: per channel a chain of g ranks in every node under a binary tree of the N = p/g nodes'
// heads, the reduction up and the broadcast down on two lanes over B blocks of R slices (b bytes
// each, S = B·R slices in all). The longest path from a leaf to the root has h = (g - 1) + d hops
// (d = floor(log2 N), the node tree's depth). Pipelined approximation:
//   fill   = 2f(α + b·β1) + h·bγ     the first slice up the longest path and the last one down it,
//                                    on links that carry nothing else yet (β1: k.betaHop, α: the
//                                    pattern's largest route latency), counted on the f hops of the
//                                    slowest kind only: the d network hops when N > 1 (a chain hop
//                                    on NVLink costs a fraction of a NIC hop), else the g - 1 chain
//                                    hops
//   stream = S·max(bβ, c·bγ)         every slice through the slowest stage: the wire with every
//                                    flow of the pattern sharing it (β, effective_params.cc: every
//                                    channel's edges both ways at once, so a link carrying up and
//                                    down flows runs each at its share), or a head reducing its c
//                                    children (its chain child and up to two child nodes)
// so for large n it tends to the busiest link's bytes over its bandwidth. The down lane trails the up
// lane by one block at the root, but the busiest link stays busy meanwhile (up's flows leave it to
// down's), so the tail adds nothing beyond the fill. Replay against this form: tests/sim/
// nccl_tree_test.cc (ClosedFormIsNearTheReplay, the band it states).
Micros ncclTreeAllReduce(int p, int g, Bytes n, int blocks, std::int64_t rounds, const CostParams& k) {
  const double nb = static_cast<double>(n);
  if (p == 1) return nb * k.delta;
  if (g <= 0 || g >= p || p % g != 0) g = p;
  const int N = p / g, d = depthOf(N), h = (g - 1) + d;
  const double R = static_cast<double>(rounds), S = R * std::max(blocks, 1), b = nb / S;
  const int children = (g > 1 ? 1 : 0) + (N > 2 ? 2 : N - 1);  // the busiest head's
  const double beta1 = k.betaHop > 0 ? k.betaHop : k.beta;
  const int f = N > 1 ? d : g - 1;
  const double fill = 2 * f * (k.alpha + b * beta1) + h * b * k.gamma;
  return fill + S * std::max(b * k.beta, children * b * k.gamma);
}

Micros doubleBinaryTreeAllReduce(int p, Bytes n, std::int64_t rounds, const CostParams& k) {
  const double nb = static_cast<double>(n);
  if (p == 1) return nb * k.delta;
  return treeAllReduce(p, n / 2, rounds, k);
}

Micros treeBroadcast(int p, Bytes n, std::int64_t rounds, const CostParams& k) {
  const double nb = static_cast<double>(n);
  if (p == 1) return nb * k.delta;
  const double R = static_cast<double>(rounds), b = nb / R;
  const int d = depthOf(p);
  return std::max(d * (k.alpha + b * k.beta) + (R - 1) * std::max(b * k.beta, b * k.delta), R * b * k.delta);
}

Micros treeReduce(int p, Bytes n, std::int64_t rounds, const CostParams& k) {
  const double nb = static_cast<double>(n);
  if (p == 1) return nb * k.delta;
  const double R = static_cast<double>(rounds), b = nb / R;
  return up(p, b, R, k);
}

}  // namespace cclab::sim
