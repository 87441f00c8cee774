// The validator catches broken plans: each test breaks a correct plan in one way.
#include <gtest/gtest.h>

#include "collectives/plan/validate.h"

namespace cclab::plan {
namespace {

bool mentions(const std::vector<std::string>& problems, const std::string& what) {
  for (const auto& p : problems)
    if (p.find(what) != std::string::npos) return true;
  return false;
}

Op* firstOf(Plan& plan, int rank, OpKind kind) {
  for (Op& op : plan.ranks[rank])
    if (op.kind == kind) return &op;
  return nullptr;
}

TEST(Validator, AcceptsACorrectPlan) { EXPECT_TRUE(validate(allReduceRing(5, 23)).empty()); }

TEST(Validator, CatchesAnUnmatchedSend) {
  Plan plan = allReduceRing(4, 16);
  auto& ops = plan.ranks[2];
  ops.erase(std::find_if(ops.begin(), ops.end(), [](const Op& o) { return o.kind == OpKind::Recv; }));
  EXPECT_TRUE(mentions(validate(plan), "sends but"));
}

TEST(Validator, CatchesMismatchedCounts) {
  Plan plan = allReduceRing(4, 16);
  firstOf(plan, 1, OpKind::Send)->src.count -= 1;
  EXPECT_TRUE(mentions(validate(plan), "does not match"));
}

TEST(Validator, CatchesARangeOutsideItsBuffer) {
  Plan plan = allReduceTree(4, 16);
  firstOf(plan, 0, OpKind::Send)->src.offset = 10;
  EXPECT_TRUE(mentions(validate(plan), "outside"));
}

TEST(Validator, CatchesADoubleContribution) {
  Plan plan = allReduceRing(3, 9);
  // Rank 0 reduces a received chunk into its output twice: the element holds a rank's input twice.
  Op* rr = firstOf(plan, 0, OpKind::RecvReduce);
  rr->src = rr->dst;
  const auto problems = validate(plan);
  EXPECT_TRUE(mentions(problems, "expected each rank's element once")) << (problems.empty() ? "" : problems.front());
}

TEST(Validator, CatchesAnOutputNeverWritten) {
  Plan plan = allGatherRing(3, 4);
  auto& ops = plan.ranks[1];
  ops.erase(std::find_if(ops.begin(), ops.end(), [](const Op& o) { return o.kind == OpKind::Copy; }));
  EXPECT_TRUE(mentions(validate(plan), "garbage"));
}

TEST(Validator, CatchesADeadlock) {
  // Two ranks that each wait to receive before they send.
  Plan plan = allReduceRing(2, 8);
  for (int r = 0; r < 2; ++r) {
    const int peer = 1 - r;
    plan.ranks[r] = {Op{OpKind::Recv, peer, 0, {}, {Buf::Output, 0, 8}}, Op{OpKind::Send, peer, 0, {Buf::Input, 0, 8}, {}}};
  }
  EXPECT_TRUE(mentions(validate(plan), "deadlocks"));
}

TEST(Validator, CatchesMisalignedOpsInOnePhase) {
  // Recursive halving-doubling with every step squeezed into one phase cannot be pipelined.
  Plan plan = allReduceHalvingDoubling(4, 64);
  for (auto& ops : plan.ranks)
    for (Op& op : ops) op.phase = 0;
  plan.nphases = 1;
  EXPECT_TRUE(mentions(validate(plan), "cannot be pipelined"));
}

}  // namespace
}  // namespace cclab::plan
