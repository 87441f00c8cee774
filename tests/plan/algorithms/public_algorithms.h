// The public algorithm files of tests/plan/algorithms (each file names the public example it
// reproduces) with the collective and rank count each is written for: the one list that the plan,
// host, simulator and CUDA-lowering tests of algorithm files walk.
#pragma once

#include <array>
#include <string>

#include "collectives/plan/plan.h"

namespace cclab::testing {

struct PublicAlgorithm {
  const char* file;
  plan::Collective collective;
  int nranks;
};

inline constexpr std::array<PublicAlgorithm, 4> kPublicAlgorithms{{
    {"msccl_allreduce_allpairs_8.xml", plan::Collective::AllReduce, 8},
    {"msccl_allreduce_hierarchical_4x2.xml", plan::Collective::AllReduce, 8},
    {"mscclpp_allgather_2gpus.json", plan::Collective::AllGather, 2},
    {"mscclpp_allreduce_allpairs_4.json", plan::Collective::AllReduce, 4},
}};

// The file's path in the source tree (CCLAB_SOURCE_DIR is defined by each test target).
inline std::string publicAlgorithmPath(const char* file) {
  return std::string(CCLAB_SOURCE_DIR) + "/tests/plan/algorithms/" + file;
}

}  // namespace cclab::testing
