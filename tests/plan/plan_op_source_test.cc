// OpSource (op_source.h): the ring and hierarchical rules give makePlan's ops, op for op (after
// dropping the rule's empty ops), and their closed-form sizes, channel starts, largest op and
// op-slice counts equal a scan of the materialized plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/plan/op_source.h"
#include "collectives/plan/slice_walk.h"

namespace cclab::plan {
namespace {

struct Case {
  Algorithm algorithm;
  int nranks;
  std::int64_t count;
  PlanShape shape;
};

std::string label(const Case& c) {
  return std::string(name(c.algorithm)) + " p=" + std::to_string(c.nranks) + " n=" + std::to_string(c.count) +
         " C=" + std::to_string(c.shape.channels) + " g=" + std::to_string(c.shape.ranksPerNode);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  // Counts: empty, fewer elements than ranks (empty chunks and pieces), not a multiple of anything.
  for (std::int64_t count : {std::int64_t{0}, std::int64_t{5}, std::int64_t{1237}, std::int64_t{40009}})
    for (int channels : {1, 2, 3}) {
      for (int p : {1, 2, 3, 7, 16}) out.push_back({Algorithm::Ring, p, count, {channels, 0}});
      out.push_back({Algorithm::Ring, 16, count, {channels, 4}});  // per-channel ring orders
      out.push_back({Algorithm::Ring, 12, count, {channels, 5}});  // 5 does not divide 12: identity
      for (auto [p, g] : {std::pair{12, 3}, std::pair{16, 4}, std::pair{16, 8}, std::pair{6, 2}, std::pair{8, 0},
                          std::pair{8, 1}, std::pair{8, 8}, std::pair{5, 5}})
        out.push_back({Algorithm::Hierarchical, p, count, {channels, g}});
      out.push_back({Algorithm::Hierarchical, 12, count, {channels, 3, 5}});  // blocks asked for
      out.push_back({Algorithm::Hierarchical, 16, count, {channels, 4, 2}});
    }
  return out;
}

TEST(OpSource, RulesGiveMakePlansOpsOpForOp) {
  int compared = 0;
  for (const Case& c : cases()) {
    const Plan plan = makePlan(Collective::AllReduce, c.algorithm, c.nranks, c.count, 0, c.shape);
    const auto src = makeOpSource(Collective::AllReduce, c.algorithm, c.nranks, c.count, 0, c.shape);
    ASSERT_EQ(dynamic_cast<const PlanOpSource*>(src.get()), nullptr) << label(c) << ": expected a rule source";
    EXPECT_EQ(src->info().algorithm, plan.algorithm) << label(c);
    EXPECT_EQ(src->info().nchannels, plan.nchannels) << label(c);
    EXPECT_EQ(src->info().ranksPerNode, plan.ranksPerNode) << label(c);
    EXPECT_EQ(src->info().nphases, plan.nphases) << label(c);
    EXPECT_EQ(src->info().deps, plan.deps) << label(c);
    EXPECT_EQ(src->info().scratchCount, plan.scratchCount) << label(c);
    for (int r = 0; r < c.nranks; ++r) {
      std::vector<Op> nonEmpty;
      for (std::int64_t i = 0; i < src->size(r); ++i) {
        const Op op = src->op(r, i);
        if (op.count() > 0) nonEmpty.push_back(op);
      }
      const auto& want = plan.ranks[static_cast<std::size_t>(r)];
      ASSERT_EQ(nonEmpty.size(), want.size()) << label(c) << " rank " << r;
      for (std::size_t i = 0; i < want.size(); ++i) {
        const Op &a = nonEmpty[i], &b = want[i];
        const bool same = a.kind == b.kind && a.peer == b.peer && a.phase == b.phase && a.channel == b.channel &&
                          (!b.reads() || a.src == b.src) && (!b.writes() || a.dst == b.dst);
        ASSERT_TRUE(same) << label(c) << " rank " << r << " op " << i << ": rule " << describe(a) << " ch" << int{a.channel}
                          << ", plan " << describe(b) << " ch" << int{b.channel};
        ++compared;
      }
      // Channel c's ops start at channelBegin (the default binary search agrees with the rule).
      for (int ch = 0; ch < c.shape.channels; ++ch) {
        const std::int64_t begin = src->channelBegin(r, ch);
        for (std::int64_t i = 0; i < src->size(r); ++i)
          ASSERT_EQ(src->op(r, i).channel < ch, i < begin) << label(c) << " rank " << r << " channel " << ch;
      }
    }
    // The closed forms against the plan's scan.
    const PlanOpSource held(plan);
    EXPECT_EQ(src->maxOpCount(), held.maxOpCount()) << label(c);
    for (int r = 0; r < c.nranks; ++r) {  // the connections the rule lists are those the plan's ops use
      const auto a = src->links(r), b = held.links(r);
      EXPECT_EQ(a.size(), b.size()) << label(c) << " rank " << r;
      EXPECT_TRUE(std::is_permutation(a.begin(), a.end(), b.begin(), b.end())) << label(c) << " rank " << r;
    }
    for (std::int64_t slice : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{100}})
      EXPECT_EQ(src->opSlices(slice, INT64_MAX), held.opSlices(slice, INT64_MAX)) << label(c) << " slice " << slice;
  }
  EXPECT_GT(compared, 50000);  // the cases above really compared ops
}

// A walk of a rule source visits the same (op, slice) pairs as a walk of the plan (empty ops have no
// slice), so every consumer that walks sees the same schedule.
TEST(OpSource, WalkingARuleEqualsWalkingThePlan) {
  for (const Case& c : {Case{Algorithm::Ring, 7, 50, {2, 0}}, Case{Algorithm::Hierarchical, 12, 31, {1, 3}},
                        Case{Algorithm::Hierarchical, 16, 9001, {3, 4}}})
    for (std::int64_t slice : {std::int64_t{0}, std::int64_t{3}, std::int64_t{64}}) {
      const Plan plan = makePlan(Collective::AllReduce, c.algorithm, c.nranks, c.count, 0, c.shape);
      const auto src = makeOpSource(Collective::AllReduce, c.algorithm, c.nranks, c.count, 0, c.shape);
      for (int r = 0; r < c.nranks; ++r) {
        SliceWalker<Op, SourceOps> rule(SourceOps{src.get(), r, 0, src->size(r)}, slice);
        SliceCursor held(plan.ranks[static_cast<std::size_t>(r)], slice);
        for (; !held.done(); held.advance(), rule.advance()) {
          ASSERT_FALSE(rule.done()) << label(c);
          EXPECT_EQ(describe(rule.current()), describe(held.current())) << label(c) << " rank " << r;
          EXPECT_EQ(rule.sliceRange(), held.sliceRange()) << label(c) << " rank " << r;
        }
        EXPECT_TRUE(rule.done()) << label(c);
      }
    }
}

TEST(OpSource, OtherAlgorithmsAreTheMaterializedPlanAndBadArgumentsThrowAsMakePlan) {
  const auto tree = makeOpSource(Collective::AllReduce, Algorithm::Tree, 5, 100);
  const auto* held = dynamic_cast<const PlanOpSource*>(tree.get());
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->totalOps(), static_cast<std::int64_t>(held->plan().opCount()));
  EXPECT_THROW(makeOpSource(Collective::AllReduce, Algorithm::Ring, 0, 10), InvalidArgument);
  EXPECT_THROW(makeOpSource(Collective::AllReduce, Algorithm::Ring, 4, -1), InvalidArgument);
  EXPECT_THROW(makeOpSource(Collective::AllReduce, Algorithm::Ring, 4, 10, 0, {0, 0}), InvalidArgument);
  EXPECT_THROW(makeOpSource(Collective::AllReduce, Algorithm::Ring, 4, 10, 0, {kMaxChannels + 1, 0}), InvalidArgument);
  EXPECT_THROW(makeOpSource(Collective::AllReduce, Algorithm::Hierarchical, 12, 10, 0, {1, 5}), InvalidArgument);
  EXPECT_THROW(makeOpSource(Collective::AllReduce, Algorithm::Ring, 4, 10, 0, {1, -1}), InvalidArgument);
}

// The point of a rule: a plan far too large to hold costs nothing to describe.
TEST(OpSource, AMillionRankRingIsARule) {
  const auto src = makeOpSource(Collective::AllReduce, Algorithm::Ring, 1 << 20, std::int64_t{1} << 30);
  EXPECT_EQ(src->size(12345), 4 * ((std::int64_t{1} << 20) - 1));
  const Op last = src->op((1 << 20) - 1, src->size(0) - 1);
  EXPECT_EQ(last.kind, OpKind::Recv);
  EXPECT_EQ(last.peer, (1 << 20) - 2);
  EXPECT_EQ(src->maxOpCount(), 1024);
}

}  // namespace
}  // namespace cclab::plan
