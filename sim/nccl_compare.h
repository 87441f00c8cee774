// `--algo nccl`: for each size, the algorithm and protocol NCCL's tuner picks (nccl_tuner.h) with its
// own predicted time, and our prediction of the same algorithm on the same protocol, side by side.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collectives/plan/plan.h"
#include "sim/nccl_tuner.h"
#include "sim/predictor.h"

namespace cclab::sim {

struct NcclComparison {
  Bytes size = 0;              // the size column (nccl-tests' convention)
  NcclEstimate nccl;           // NCCL's pick and its model's time
  std::string ourAlgorithm;    // what we predict it with: ring (chain for broadcast/reduce), tree, nvls
  std::optional<Prediction> ours;  // none where we have no model of NCCL's pick
};

// Our algorithm for NCCL's: its ring is our ring, its tree our tree (NCCL's), NVLS and NVLS tree
// our nvls (across nodes: a ring between the nodes where NCCL's NVLS tree has a tree).
std::optional<SimAlgorithm> ourAlgorithmFor(NcclAlgorithm a);

// One row per size; `predict` sets our model (replay by default), its protocol is forced to NCCL's pick
// where the topology models protocols.
std::vector<NcclComparison> compareWithNccl(const Predictor& predict, plan::Collective c, int p, std::int64_t elemSize,
                                            const std::vector<Bytes>& sizes);

}  // namespace cclab::sim
