// The simulator's algorithms: every plan algorithm (collectives/plan) plus the hierarchical allreduces
// of analytic_hierarchical.cc, which have no plan. One table (algorithms.cc) gives every name, and
// every list or error message about algorithms is built from it.
//
// Why a sim-side enum rather than two more plan::Algorithm values: plan::Algorithm means "makePlan can
// write it", and the host, CUDA and NCCL executors switch over it; a hierarchical algorithm has no
// plan and only the analytic model prices it, so it stays out of what every executor must handle.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "collectives/plan/plan.h"

namespace cclab::sim {

enum class SimAlgorithm : std::uint8_t {
  Ring, Tree, DoubleBinaryTree, HalvingDoubling, RecursiveDoubling, Chain,
  HierarchicalRing,  // ring reduce-scatter/allgather in a node, ring allreduce across nodes
  HierarchicalTree,  // the same with a tree allreduce across nodes
};

struct SimAlgorithmInfo {
  SimAlgorithm id;
  plan::Algorithm planAlgorithm;  // the plan it replays, or for hierarchical ones the inter-node one
  bool hierarchical;
  std::string name;  // plan::name(planAlgorithm), with "hier-" in front for the hierarchical ones
};

// Every algorithm, in the order lists print them.
std::span<const SimAlgorithmInfo> simAlgorithms();
const SimAlgorithmInfo& infoOf(SimAlgorithm a);
std::string_view name(SimAlgorithm a);
// "ring, tree, dbtree, rhd, rd, chain, hier-ring, hier-tree".
std::string algorithmNames();
// Throws InvalidArgument "--algo 'x' is not one of <algorithmNames()>".
SimAlgorithm parseSimAlgorithm(std::string_view text);
// Refuses (InvalidArgument naming --algo) an algorithm without a plan for c, a hierarchical algorithm
// for anything but allreduce, or on a topology that is not a cluster (`isCluster` false).
void checkAlgorithm(plan::Collective c, SimAlgorithm a, bool isCluster);

}  // namespace cclab::sim
