// Plan v2: channels (rank orders per node, disjoint parts), the hierarchical allreduce's structure,
// and ReduceAll's bit-identical results.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <tuple>

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
  EXPECT_THROW(makePlan(Collective::AllReduce, Algorithm::Hierarchical, 8, 8, 0, {1, 4, -1}), InvalidArgument);
  EXPECT_THROW(makePlan(Collective::AllReduce, Algorithm::Hierarchical, 8, 8, 0, {1, 4, kMaxHierarchicalBlocks + 1}), InvalidArgument);
  EXPECT_EQ(makePlan(Collective::AllReduce, Algorithm::Hierarchical, 8, 100, 0, {2, 4, 5}).nphases, 5 + 2);  // blocks asked for
  EXPECT_EQ(makePlan(Collective::AllReduce, Algorithm::Hierarchical, 8, 100, 0, {2, 4}).nphases, 1 + 2);      // too few elements for 2
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

// The node lane moves whole shards of a block: 4(g-1) ops per rank and block, whatever the node count,
// and only inside the node; the network lane 4(N-1) ops per block, each a piece of 1/N of a shard, only
// to the ranks of its local index. The lanes are the channels 2c and 2c+1 of each of the C parts.
TEST(Hierarchical, NodeLaneOpsDoNotGrowWithTheNodeCount) {
  constexpr int kPerNode = 4, kChannels = 2;
  for (int nodes : {2, 3, 5, 8}) {
    const int p = kPerNode * nodes;
    const std::int64_t count = 1000 * p + 7;
    const Plan plan = makePlan(Collective::AllReduce, Algorithm::Hierarchical, p, count, 0, {kChannels, kPerNode});
    ASSERT_TRUE(validate(plan, {.symbolic = false}).empty()) << nodes;
    const int blocks = hierarchicalBlocks(chunkOf(count, kChannels, kChannels - 1).count, kPerNode, nodes);
    EXPECT_EQ(plan.nphases, blocks + 2);
    EXPECT_EQ(plan.nchannels, 2 * kChannels);
    for (int r = 0; r < p; ++r) {
      const auto spans = channelOps(plan, r);
      for (int c = 0; c < 2 * kChannels; ++c) {
        const bool network = c % 2 == 1;
        int intra = 0, inter = 0;
        for (const Op& op : spans[c]) {
          if (op.peer / kPerNode == r / kPerNode) {
            ++intra;
            EXPECT_GE(op.count(), count / kChannels / blocks / kPerNode) << describe(op);  // a whole shard
          } else {
            ++inter;
            EXPECT_LE(op.count(), count / kChannels / blocks / kPerNode / nodes + 1) << describe(op);  // a piece
          }
        }
        EXPECT_EQ(intra, network ? 0 : 4 * (kPerNode - 1) * blocks) << "nodes " << nodes << " rank " << r << " channel " << c;
        EXPECT_EQ(inter, network ? 4 * (nodes - 1) * blocks : 0) << "nodes " << nodes << " rank " << r << " channel " << c;
      }
    }
  }
}

// Pipelined over B blocks: every block count is a valid plan (symbolic check, interleaved and
// sequential, slices, in place), block t's node reduce-scatter shares a phase with block t-2's node
// allgather and overlaps block t-1's network allreduce, and the deps are the ones that hand blocks over.
TEST(Hierarchical, PipelinedBlocksAreValidForEveryBlockCount) {
  ValidateOptions fast;
  fast.sliceElems = {0, 3};
  for (int g : {2, 3})
    for (int nodes : {2, 3})
      for (int blocks : {1, 2, 3, 5})
        for (std::int64_t count : {std::int64_t{0}, std::int64_t{7}, std::int64_t{g * nodes * blocks * 2 + 5}}) {
          const Plan plan = allReduceHierarchical(g * nodes, count, g, blocks);
          ASSERT_EQ(plan.nphases, blocks + 2);
          const auto problems = validate(plan, fast);
          ASSERT_TRUE(problems.empty()) << "g " << g << " nodes " << nodes << " blocks " << blocks << " count " << count << ": "
                                        << problems.front() << "\n" << dump(plan);
        }
  const Plan plan = allReduceHierarchical(8, 4 * 64, 4, 3);
  std::set<std::tuple<int, int>> nodePhases, netPhases;
  for (const Op& op : plan.ranks[5]) (op.channel == 0 ? nodePhases : netPhases).insert({op.phase, op.peer / 4 == 1});
  EXPECT_EQ(nodePhases, (std::set<std::tuple<int, int>>{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}}));
  EXPECT_EQ(netPhases, (std::set<std::tuple<int, int>>{{1, 0}, {2, 0}, {3, 0}}));
  EXPECT_EQ(plan.deps, (std::vector<PhaseDep>{{1, 1, 0, 0}, {0, 2, 1, 1}, {1, 2, 0, 1}, {0, 3, 1, 2}, {1, 3, 0, 2}, {0, 4, 1, 3}}));
}

// Without its deps the two lanes race on the same elements: the validator says so, and the
// interpreter's result is wrong or it stops; with a dep that points forward, it is refused.
TEST(Hierarchical, ValidatorNeedsTheDepsThatOrderTheLanes) {
  Plan plan = allReduceHierarchical(6, 6 * 2 * 3 + 1, 3, 2);
  ASSERT_TRUE(validate(plan, {.symbolic = false}).empty());
  Plan loose = plan;
  loose.deps.erase(loose.deps.begin() + 1);  // the node lane's allgather no longer waits for the network
  auto problems = validate(loose, {.symbolic = false});
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("no phase dep orders them"), std::string::npos) << problems.front();
  Plan none = plan;
  none.deps.clear();
  EXPECT_FALSE(validate(none).empty());
  Plan forward = plan;
  forward.deps.push_back({0, 1, 1, 2});
  problems = validate(forward, {.symbolic = false});
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("earlier phase"), std::string::npos) << problems.front();
  Plan self = plan;
  self.deps.push_back({1, 2, 1, 1});
  EXPECT_FALSE(validate(self, {.symbolic = false}).empty());
}

// The interpreter honours a dep: a two-channel plan whose channel 1 copies what channel 0 received is
// right with the dep (interleaved and sequential) and reads stale data without it (channel 1 runs first).
TEST(PhaseDeps, InterpreterWaitsForTheEarlierPhaseOfTheOtherChannel) {
  Plan plan;
  plan.collective = Collective::AllReduce;
  plan.nranks = 2;
  plan.count = 4;
  plan.nchannels = 2;
  plan.nphases = 2;
  plan.ranks.resize(2);
  for (int r = 0; r < 2; ++r) {  // channel 0, phase 0: out[0,4) = in + peer's in; channel 1, phase 1: out[0,2) = out[2,4)
    plan.ranks[r].push_back({OpKind::Send, 1 - r, 0, {Buf::Input, 0, 4}, {}, 0});
    plan.ranks[r].push_back({OpKind::RecvReduce, 1 - r, 0, {Buf::Input, 0, 4}, {Buf::Output, 0, 4}, 0});
    plan.ranks[r].push_back({OpKind::Copy, -1, 1, {Buf::Output, 2, 2}, {Buf::Output, 0, 2}, 1});
  }
  plan.deps = {{1, 1, 0, 0}};
  auto run = [&](const Plan& p, bool interleaved) {
    std::vector<std::vector<int>> in{{1, 2, 3, 4}, {10, 20, 30, 40}}, out(2, std::vector<int>(4, -1));
    std::vector<RankBuffers<int>> bufs{{in[0].data(), out[0].data(), nullptr}, {in[1].data(), out[1].data(), nullptr}};
    interpret<int>(p, bufs, [](int a, int b) { return a + b; }, {0, 0, interleaved});
    return out[0];
  };
  EXPECT_EQ(run(plan, true), (std::vector<int>{33, 44, 33, 44}));
  EXPECT_EQ(run(plan, false), (std::vector<int>{33, 44, 33, 44}));
  Plan loose = plan;
  loose.deps.clear();
  loose.ranks[0].insert(loose.ranks[0].begin(), loose.ranks[0].back());  // channel 1 first in rank 0's list
  loose.ranks[0].pop_back();
  loose.ranks[0].front().phase = 0;
  for (Op& op : loose.ranks[0]) op.channel = op.kind == OpKind::Copy ? 0 : 1;
  for (Op& op : loose.ranks[1]) op.channel = op.kind == OpKind::Copy ? 0 : 1;
  std::stable_sort(loose.ranks[1].begin(), loose.ranks[1].end(), [](const Op& a, const Op& b) { return a.channel < b.channel; });
  EXPECT_NE(run(loose, true), (std::vector<int>{33, 44, 33, 44}));
  EXPECT_FALSE(validate(loose, {.symbolic = false}).empty());
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
