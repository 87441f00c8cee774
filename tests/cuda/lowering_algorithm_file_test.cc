// The CUDA lowering of algorithms read from files (collectives/plan/algorithm_file.h): the public MSCCL
// and MSCCL++ algorithms of tests/plan/algorithms lower race-free, in a valid issue order, and compute
// what the plan interpreter computes, in the issue order and in random allowed orders, in place and out
// of place, at counts that are and are not multiples of their chunks.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "collectives/cuda/lowering.h"
#include "collectives/plan/algorithm_file.h"
#include "collectives/plan/interpret.h"
#include "tests/cuda/lowered_checks.h"
#include "tests/cuda/lowered_memory.h"
#include "tests/plan/algorithms/public_algorithms.h"

namespace cclab::cuda {
namespace {

using test_support::Memory;

TEST(Lowering, AlgorithmFilesAreRaceFreeAndComputeThePlan) {
  for (const auto& e : cclab::testing::kPublicAlgorithms) {
    const plan::Algorithm a = plan::parseAlgorithm("file:" + cclab::testing::publicAlgorithmPath(e.file));
    for (std::int64_t count : {std::int64_t{64}, std::int64_t{131}})
      for (bool inPlace : {false, true}) {
        SCOPED_TRACE(std::string(e.file) + " n=" + std::to_string(count) + (inPlace ? " in place" : ""));
        const plan::Plan p = plan::makePlan(e.collective, a, e.nranks, count);
        const std::int64_t slice = 3;
        Memory reference(p, inPlace);
        plan::interpret<double>(p, reference.views, [](double x, double y) { return x + y; }, {slice, 0});
        const auto want = reference.results(p);
        Memory shapeOnly(p, inPlace);
        const LoweredPlan lp = lowerPlan(p, slice, shapeOnly.aliases);
        test_support::checkIssueOrder(lp);
        test_support::checkNoRace(lp, shapeOnly);
        Memory mem(p, inPlace);
        test_support::runSteps(lp, mem, nullptr);
        EXPECT_EQ(mem.results(p), want) << "issue order";
        std::mt19937 rng(7);
        Memory shuffled(p, inPlace);
        test_support::runSteps(lp, shuffled, &rng);
        EXPECT_EQ(shuffled.results(p), want) << "random order";
      }
  }
}

}  // namespace
}  // namespace cclab::cuda
