// Every (collective, algorithm) pair that has a generator: the plan tests sweep all of them.
#pragma once

#include <algorithm>
#include <string>

#include "collectives/plan/plan.h"

namespace cclab::plan::testing {

struct GeneratorCase {
  Collective collective;
  Algorithm algorithm;
};

inline constexpr GeneratorCase kGeneratorCases[] = {
    {Collective::AllReduce, Algorithm::Ring},
    {Collective::AllReduce, Algorithm::Tree},
    {Collective::AllReduce, Algorithm::FlatTree},
    {Collective::AllReduce, Algorithm::DoubleBinaryTree},
    {Collective::AllReduce, Algorithm::HalvingDoubling},
    {Collective::AllReduce, Algorithm::RecursiveDoubling},
    {Collective::AllReduce, Algorithm::Hierarchical},
    {Collective::AllReduce, Algorithm::OneShot},
    {Collective::AllReduce, Algorithm::TwoShot},
    {Collective::ReduceScatter, Algorithm::Ring},
    {Collective::AllGather, Algorithm::Ring},
    {Collective::Broadcast, Algorithm::Chain},
    {Collective::Broadcast, Algorithm::Tree},
    {Collective::Reduce, Algorithm::Chain},
    {Collective::Reduce, Algorithm::Tree},
};

inline std::string caseName(const GeneratorCase& c) {
  std::string s = std::string(name(c.collective)) + "_" + std::string(name(c.algorithm));
  std::replace(s.begin(), s.end(), '-', '_');  // a test name has no '-' ("flat-tree")
  return s;
}

}  // namespace cclab::plan::testing
