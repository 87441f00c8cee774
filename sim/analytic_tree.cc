// Binary-tree family: allreduce on one tree (collectives/plan/allreduce_tree.cc), on two trees
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
// The double binary tree runs two such trees on half the data each (h = n/2) in one phase. With one
// slice per op a rank runs its ops of the first tree before those of the second (plan order), so the
// trees do not overlap and the critical path has 3d hops, not 2d; its time is a maximum of a few
// linear forms
//   T = max_i (a_i·(α + hβ) + b_i·hγ),
// where (a_i, b_i) are the (hops, reductions) of the schedule's critical paths. They depend only on the
// two trees, so they are computed once per p (criticalPaths below, a max-plus evaluation over the
// trees' structure) and cached. For R > 1 slices, slice-major order interleaves the trees and the
// single-tree pipelined approximation on h applies.
#include <algorithm>
#include <bit>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "collectives/plan/binary_tree.h"

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

// A time as a max-plus polynomial: max over terms of hops·L + reductions·g, kept as the Pareto set of
// (hops, reductions) pairs.
using Terms = std::vector<std::pair<int, int>>;

Terms maxOf(const Terms& x, const Terms& y) {
  Terms all = x;
  all.insert(all.end(), y.begin(), y.end());
  std::sort(all.begin(), all.end(), [](auto a, auto b) { return a.first != b.first ? a.first > b.first : a.second > b.second; });
  Terms out;
  for (const auto& t : all)
    if (out.empty() || t.second > out.back().second) out.push_back(t);  // not dominated by a term with more hops
  return out;
}

Terms plus(Terms x, int hops, int reductions) {
  for (auto& t : x) {
    t.first += hops;
    t.second += reductions;
  }
  return x;
}

// Critical paths (hops, reductions) of the double-binary-tree schedule with one slice per op, on
// ranks that each send and receive on separate links: rank by rank, phase 0 reduces up tree 0 then
// tree 1, phase 1 receives and forwards down tree 0 then tree 1 (collectives/plan/allreduce_dbtree.cc).
Terms doubleTreePaths(int p) {
  const plan::BinaryTree trees[2] = {plan::inOrderTree(p), plan::shiftedInOrderTree(p, 1)};
  // Each rank's op list: (tree, step) with step 0..: per tree, its reductions then its send (up), then
  // per tree, its receive then its sends (down). Sends are issued at the rank's current time.
  struct Rank {
    Terms now{{0, 0}};
    int stage = 0;  // 0: up tree 0, 1: up tree 1, 2: down tree 0, 3: down tree 1, 4: done
  };
  std::vector<Rank> ranks(static_cast<std::size_t>(p));
  std::vector<std::optional<Terms>> sentUp[2], sentDown[2];
  for (int t = 0; t < 2; ++t) {
    sentUp[t].assign(static_cast<std::size_t>(p), std::nullopt);
    sentDown[t].assign(static_cast<std::size_t>(p), std::nullopt);
  }
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      auto& rk = ranks[static_cast<std::size_t>(r)];
      while (rk.stage < 4) {
        const int t = rk.stage % 2;
        const auto& node = trees[t].nodes[static_cast<std::size_t>(r)];
        if (rk.stage < 2) {  // up: wait for every child, reducing in child order
          bool ready = true;
          for (int c : node.child)
            if (c >= 0 && !sentUp[t][static_cast<std::size_t>(c)]) ready = false;
          if (!ready) break;
          for (int c : node.child)
            if (c >= 0) rk.now = plus(maxOf(rk.now, plus(*sentUp[t][static_cast<std::size_t>(c)], 1, 0)), 0, 1);
          sentUp[t][static_cast<std::size_t>(r)] = rk.now;
        } else {  // down: wait for the parent, then send to the children at once
          if (node.parent >= 0) {
            if (!sentDown[t][static_cast<std::size_t>(node.parent)]) break;
            rk.now = maxOf(rk.now, plus(*sentDown[t][static_cast<std::size_t>(node.parent)], 1, 0));
          }
          sentDown[t][static_cast<std::size_t>(r)] = rk.now;
        }
        ++rk.stage;
        progress = true;
      }
    }
  }
  Terms end;
  for (const auto& rk : ranks) end = maxOf(end, rk.now);
  return end;
}

const Terms& cachedDoubleTreePaths(int p) {
  static std::mutex mutex;
  static std::map<int, Terms> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(p);
  if (it == cache.end()) it = cache.emplace(p, doubleTreePaths(p)).first;
  return it->second;
}

}  // namespace

Micros treeAllReduce(int p, Bytes n, std::int64_t rounds, const CostParams& k) {
  const double nb = static_cast<double>(n);
  if (p == 1) return nb * k.delta;
  const double R = static_cast<double>(rounds), b = nb / R;
  return up(p, b, R, k) + down(p, b, R, k);
}

Micros doubleBinaryTreeAllReduce(int p, Bytes n, std::int64_t rounds, const CostParams& k) {
  const double nb = static_cast<double>(n);
  if (p == 1) return nb * k.delta;
  const double R = static_cast<double>(rounds), b = nb / 2 / R;
  const double L = k.alpha + b * k.beta, g = b * k.gamma;
  Micros t = 0;
  for (const auto& [hops, reductions] : cachedDoubleTreePaths(p)) t = std::max(t, hops * L + reductions * g);
  return R * t;
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
