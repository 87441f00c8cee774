// The simulator's algorithms: every allreduce-family plan algorithm (collectives/plan) plus the
// hierarchical allreduces on a cluster. One table (algorithms.cc) gives every name, and every list or
// error message about algorithms is built from it.
//
// hier-ring is the plan plan::Algorithm::Hierarchical ("hier", accepted as its other name) and is
// replayed like every plan; hier-tree (tree allreduce across nodes) has no plan, so only the analytic
// model prices it, and it stays out of plan::Algorithm, which every executor must handle.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "collectives/plan/plan.h"

namespace cclab::sim {

enum class SimAlgorithm : std::uint8_t {
  Ring, Tree, DoubleBinaryTree, HalvingDoubling, RecursiveDoubling, Chain, OneShot, TwoShot,
  FlatTree,          // one binary tree over all ranks (the plan before NCCL's tree became "tree")
  HierarchicalRing,  // the hier plan: ring reduce-scatter/allgather in a node, ring allreduce across nodes
  HierarchicalTree,  // the same with a tree allreduce across nodes (analytic only)
  Nvls,              // NVLink SHARP allreduce on one NVSwitch node (analytic only: analytic_nvls.cc)
};

struct SimAlgorithmInfo {
  SimAlgorithm id;
  plan::Algorithm planAlgorithm;  // the plan it replays; hier-tree: the inter-node algorithm
  bool hierarchical;              // allreduce on a cluster only
  bool analyticOnly;              // no plan: the analytic model prices it (hier-tree)
  std::string name;  // plan::name(planAlgorithm); "hier-ring", "hier-tree" for the hierarchical ones
  bool replayOnly = false;  // no closed form: always replayed (algorithm files, "file:PATH")
};

// Every algorithm, in the order lists print them.
std::span<const SimAlgorithmInfo> simAlgorithms();
const SimAlgorithmInfo& infoOf(SimAlgorithm a);
std::string_view name(SimAlgorithm a);
// "ring, tree, flat-tree, dbtree, rhd, rd, chain, oneshot, twoshot, hier-ring, hier-tree, nvls".
std::string algorithmNames();
// Also takes "hier" (the plan's name) for hier-ring, and "file:PATH", an algorithm file
// (collectives/plan/algorithm_file.h) loaded once, replayed only, with the same numeric value as its
// plan::Algorithm. Throws InvalidArgument "--algo 'x' is not one of
// <algorithmNames()>".
SimAlgorithm parseSimAlgorithm(std::string_view text);
// Refuses (InvalidArgument naming --algo) an algorithm without a plan for c, a hierarchical algorithm
// or nvls for anything but allreduce, or a hierarchical one on a topology that is not a cluster
// (`isCluster` false). Whether the topology has NVLS is checked when it is predicted (Predictor).
void checkAlgorithm(plan::Collective c, SimAlgorithm a, bool isCluster);

}  // namespace cclab::sim
