// Plan v2: channels (rank orders per node, disjoint parts), the hierarchical allreduce's structure,
// and ReduceAll's bit-identical results.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "collectives/plan/interpret.h"
#include "collectives/plan/validate.h"

namespace cclab::plan {
namespace {

TEST(Channels, EachRingChannelLeavesEveryNodeThroughADifferentRank) {
  constexpr int kNodes = 4, kPerNode = 8;
  const Plan plan = makePlan(Collective::AllReduce, Algorithm::Ring, kNodes * kPerNode, 1 << 12, 0, {kPerNode, kPerNode});
  ASSERT_TRUE(validate(plan, {.symbolic = false}).empty());
  // For every node: the set of local ranks that send off the node, one per channel, all different.
  for (int node = 0; node < kNodes; ++node) {
    std::set<int> leavers, enterers;
    for (int c = 0; c < kPerNode; ++c) {
      std::set<int> out, in;
      for (int l = 0; l < kPerNode; ++l) {
        const int r = node * kPerNode + l;
        const auto channels = channelOps(plan, r);  // keep the spans alive through the loop
        for (const Op& op : channels[static_cast<std::size_t>(c)]) {
          if (op.kind == OpKind::Send && op.peer / kPerNode != node) out.insert(l);
          if (op.kind != OpKind::Send && op.peer >= 0 && op.peer / kPerNode != node) in.insert(l);
        }
      }
      ASSERT_EQ(out.size(), 1U) << "channel " << c << " node " << node;
      ASSERT_EQ(in.size(), 1U);
      leavers.insert(*out.begin());
      enterers.insert(*in.begin());
    }
    EXPECT_EQ(leavers.size(), static_cast<std::size_t>(kPerNode)) << "node " << node;
    EXPECT_EQ(enterers.size(), static_cast<std::size_t>(kPerNode));
  }
}

TEST(Channels, PartitionTheDataAndSendTheRingsVolumeOnce) {
  const int p = 6;
  const std::int64_t n = 6007;
  const Plan one = makePlan(Collective::AllReduce, Algorithm::Ring, p, n);
  const Plan four = makePlan(Collective::AllReduce, Algorithm::Ring, p, n, 0, {4, 0});
  EXPECT_EQ(four.nchannels, 4);
  for (int r = 0; r < p; ++r) {
    std::int64_t a = 0, b = 0;
    for (const Op& op : one.ranks[r]) a += op.kind == OpKind::Send ? op.count() : 0;
    for (const Op& op : four.ranks[r]) b += op.kind == OpKind::Send ? op.count() : 0;
    EXPECT_NEAR(static_cast<double>(b), static_cast<double>(a), 4.0 * 2 * (p - 1));  // rounding of chunks only
  }
}

TEST(Channels, DoubleBinaryTreeIsTwoChannelsOfOneTreeEach) {
  const Plan plan = makePlan(Collective::AllReduce, Algorithm::DoubleBinaryTree, 8, 100);
  EXPECT_EQ(plan.nchannels, 2);
  EXPECT_EQ(plan.nphases, 2);
  for (int r = 0; r < 8; ++r) {
    const auto ch = channelOps(plan, r);
    for (const Op& op : ch[0]) EXPECT_LT((op.reads() ? op.src : op.dst).offset, 50);
    for (const Op& op : ch[1]) EXPECT_GE((op.reads() ? op.src : op.dst).offset, 50);
  }
}

TEST(Channels, ValidatorRejectsOverlappingChannelsAndDisorder) {
  Plan plan = makePlan(Collective::AllReduce, Algorithm::Ring, 4, 64, 0, {2, 0});
  Plan overlap = plan;
  for (auto& ops : overlap.ranks)
    for (Op& op : ops)
      if (op.channel == 1) {
        if (op.reads() && op.src.buf != Buf::Scratch) op.src.offset -= 32;
        if (op.writes() && op.dst.buf != Buf::Scratch) op.dst.offset -= 32;
      }
  const auto problems = validate(overlap, {.symbolic = false});
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("different channels"), std::string::npos) << problems.front();
  Plan disorder = plan;
  std::swap(disorder.ranks[0].front(), disorder.ranks[0].back());
  EXPECT_FALSE(validate(disorder, {.symbolic = false}).empty());
  Plan outOfRange = plan;
  outOfRange.ranks[1].back().channel = 7;
  EXPECT_FALSE(validate(outOfRange, {.symbolic = false}).empty());
}

TEST(Channels, RefusesBadShapes) {
  EXPECT_THROW(makePlan(Collective::AllReduce, Algorithm::Ring, 4, 8, 0, {0, 0}), InvalidArgument);
  EXPECT_THROW(makePlan(Collective::AllReduce, Algorithm::Ring, 4, 8, 0, {kMaxChannels + 1, 0}), InvalidArgument);
  EXPECT_THROW(makePlan(Collective::AllReduce, Algorithm::Hierarchical, 6, 8, 0, {1, 4}), InvalidArgument);
  EXPECT_THROW(makePlan(Collective::AllReduce, Algorithm::Ring, 4, 8, 0, {1, -1}), InvalidArgument);
}

TEST(Hierarchical, CrossesNodesOnlyBetweenRanksOfTheSameLocalIndex) {
  constexpr int kNodes = 3, kPerNode = 4;
  const Plan plan = makePlan(Collective::AllReduce, Algorithm::Hierarchical, kNodes * kPerNode, 1000, 0, {2, kPerNode});
  ASSERT_TRUE(validate(plan).empty());
  std::int64_t crossing = 0;
  for (int r = 0; r < kNodes * kPerNode; ++r)
    for (const Op& op : plan.ranks[r])
      if (op.peer >= 0 && op.peer / kPerNode != r / kPerNode) {
        EXPECT_EQ(op.peer % kPerNode, r % kPerNode) << describe(op);
        if (op.kind == OpKind::Send) crossing += op.count();
      }
  // Each rank's shard (n/g) goes round the node ring: 2(N-1)/N of it per rank, p ranks.
  EXPECT_NEAR(static_cast<double>(crossing), 2.0 * (kNodes - 1) / kNodes * 1000.0 / kPerNode * kNodes * kPerNode, 48.0);
}

// The node rings move whole shards: 4(g-1) intra-node ops per rank and channel (phases 0 and 2),
// whatever the node count, and 4(N-1) network ops (phase 1), each a piece of 1/N of the shard.
TEST(Hierarchical, NodeRingOpsDoNotGrowWithTheNodeCount) {
  constexpr int kPerNode = 4, kChannels = 2;
  for (int nodes : {2, 3, 5, 8}) {
    const int p = kPerNode * nodes;
    const std::int64_t count = 1000 * p + 7;
    const Plan plan = makePlan(Collective::AllReduce, Algorithm::Hierarchical, p, count, 0, {kChannels, kPerNode});
    ASSERT_TRUE(validate(plan, {.symbolic = false}).empty()) << nodes;
    EXPECT_EQ(plan.nphases, 3);
    for (int r = 0; r < p; ++r) {
      const auto spans = channelOps(plan, r);
      for (int c = 0; c < kChannels; ++c) {
        int intra = 0, inter = 0;
        for (const Op& op : spans[c]) {
          if (op.peer / kPerNode == r / kPerNode) {
            ++intra;
            EXPECT_NE(op.phase, 1) << describe(op);
            EXPECT_GE(op.count(), count / kChannels / kPerNode) << describe(op);  // a whole shard
          } else {
            ++inter;
            EXPECT_EQ(op.phase, 1) << describe(op);
            EXPECT_LE(op.count(), count / kChannels / kPerNode / nodes + 1) << describe(op);  // a piece
          }
        }
        EXPECT_EQ(intra, 4 * (kPerNode - 1)) << "nodes " << nodes << " rank " << r << " channel " << c;
        EXPECT_EQ(inter, 4 * (nodes - 1)) << "nodes " << nodes << " rank " << r << " channel " << c;
      }
    }
  }
}

// ReduceAll folds in rank order on every rank: every rank's output has identical bits, equal to
// ((x0 + x1) + x2) + ... computed here in the same order.
TEST(ReduceAll, OneShotAndTwoShotGiveEveryRankTheSameBits) {
  for (Algorithm a : {Algorithm::OneShot, Algorithm::TwoShot})
    for (int p : {2, 3, 5, 8}) {
      const std::int64_t n = 37;
      std::mt19937 rng(static_cast<unsigned>(p));
      std::uniform_real_distribution<float> dist(-1e3F, 1e3F);
      std::vector<std::vector<float>> in(p, std::vector<float>(n)), out(p, std::vector<float>(n)), scratch(p, std::vector<float>(n));
      for (auto& v : in)
        for (auto& x : v) x = dist(rng);
      std::vector<RankBuffers<float>> bufs;
      for (int r = 0; r < p; ++r) bufs.push_back({in[r].data(), out[r].data(), scratch[r].data()});
      const Plan plan = makePlan(Collective::AllReduce, a, p, n);
      interpret<float>(plan, bufs, [](float x, float y) { return x + y; }, {3, 1, true});
      for (std::int64_t i = 0; i < n; ++i) {
        float want = in[0][i];
        for (int q = 1; q < p; ++q) want += in[q][i];
        for (int r = 0; r < p; ++r)
          ASSERT_EQ(std::memcmp(&out[r][i], &want, sizeof(float)), 0) << name(a) << " p=" << p << " rank " << r << " i=" << i;
      }
    }
}

}  // namespace
}  // namespace cclab::plan
