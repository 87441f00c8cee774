// The host backend on a representative subset: every algorithm and collective, rank counts up to 9,
// random data of awkward sizes, in place and out of place, slices smaller than a chunk, per-rank calls
// from the caller's own threads, and a rank that never arrives (TimeoutError, no hang).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "collectives/communicator.h"
#include "collectives/core/test_data.h"

namespace cclab {
namespace {

using plan::Algorithm;
using plan::Collective;

struct Case {
  Collective collective;
  Algorithm algorithm;
  int nranks;
  std::int64_t count;
  DataType type;
  ReduceOp op;
  bool inPlace;
  std::size_t sliceBytes;
  int channels = 0;      // the plan's shape (0: the backend's default)
  int ranksPerNode = 0;  // emulated nodes
};

// Runs one group call and returns the number of wrong elements over all ranks.
std::size_t wrongAfter(Communicator& comm, const Case& run, std::uint64_t seed) {
  const int p = run.nranks;
  const int root = p - 1;
  const std::size_t w = sizeOf(run.type);
  const plan::BufferCounts c = plan::bufferCounts(run.collective, p, run.count);
  const DataSpec spec{run.type, run.op, p, seed};
  const std::size_t big = static_cast<std::size_t>(std::max(c.input, c.output)) * w;
  std::vector<std::vector<unsigned char>> in(p), out(p);
  std::vector<RankBuffers> bufs(p);
  for (int r = 0; r < p; ++r) {
    out[r].assign(big + 1, 0xCD);
    if (run.inPlace) {
      const auto inOff = static_cast<std::size_t>(plan::inPlaceInputOffset(run.collective, r, run.count)) * w;
      const auto outOff = static_cast<std::size_t>(plan::inPlaceOutputOffset(run.collective, r, run.count)) * w;
      fillInput(spec, r, 0, static_cast<std::size_t>(c.input), out[r].data() + inOff);
      bufs[r] = {out[r].data() + inOff, out[r].data() + outOff};
    } else {
      in[r].resize(static_cast<std::size_t>(c.input) * w + 1);
      fillInput(spec, r, 0, static_cast<std::size_t>(c.input), in[r].data());
      bufs[r] = {in[r].data(), out[r].data()};
    }
  }
  CollectiveOptions o;
  o.algorithm = run.algorithm;
  o.sliceBytes = run.sliceBytes;
  o.channels = run.channels;
  o.ranksPerNode = run.ranksPerNode;
  o.timeout = std::chrono::seconds(20);
  comm.runGroup({run.collective, run.count, run.type, run.op, root}, bufs, o);
  std::size_t wrong = 0;
  const auto n = static_cast<std::size_t>(run.count);
  std::vector<unsigned char> want(static_cast<std::size_t>(c.output) * w);
  for (int r = 0; r < p; ++r) {
    if (run.collective == Collective::Reduce && r != root) continue;
    switch (run.collective) {
      case Collective::AllReduce:
      case Collective::Reduce: fillExpectedReduce(spec, 0, n, want.data()); break;
      case Collective::ReduceScatter: fillExpectedReduce(spec, r * run.count, n, want.data()); break;
      case Collective::AllGather:
        for (int q = 0; q < p; ++q) fillInput(spec, q, 0, n, want.data() + q * n * w);
        break;
      case Collective::Broadcast: fillInput(spec, root, 0, n, want.data()); break;
    }
    wrong += countWrong(run.type, bufs[r].recv, want.data(), static_cast<std::size_t>(c.output));
  }
  return wrong;
}

TEST(HostBackend, AllReduceEveryAlgorithmAgainstTheExactReference) {
  for (int p : {1, 2, 3, 4, 5, 8, 9}) {
    auto comm = makeCommunicator(Backend::Host, {p});
    for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::DoubleBinaryTree, Algorithm::HalvingDoubling,
                        Algorithm::RecursiveDoubling, Algorithm::Auto})
      for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{p + 1}, std::int64_t{100003}})
        for (bool inPlace : {false, true}) {
          const Case run{Collective::AllReduce, a, p, n, DataType::Float32, ReduceOp::Sum, inPlace, 4096};
          EXPECT_EQ(wrongAfter(*comm, run, 42 + n), 0U)
              << "p=" << p << " algo=" << plan::name(a) << " n=" << n << " inPlace=" << inPlace;
        }
  }
}

// NCCL's tree (a chain per emulated node, a double binary tree between nodes, up and down lanes
// linked by deps) against the exact reference: 1, 2, 3, 4 and 5 nodes (odd counts too), node sizes
// 1..4, channels 1..3, random non-power-of-two counts (those from 131072 elements up cut into >= 2
// blocks), every op on one case, and the flat tree it replaced.
TEST(HostBackend, NcclTreeOnEmulatedNodesAgainstTheExactReference) {
  std::mt19937_64 rng(21);
  struct Layout {
    int p, ranksPerNode;
  };
  for (const Layout l : {Layout{4, 0}, Layout{4, 2}, Layout{6, 2}, Layout{9, 3}, Layout{5, 1}, Layout{8, 4}, Layout{8, 2}}) {
    auto comm = makeCommunicator(Backend::Host, {l.p});
    auto check = [&](int channels, std::int64_t n, bool inPlace) {
      const Case run{Collective::AllReduce, Algorithm::Tree, l.p, n, DataType::Float32, ReduceOp::Sum, inPlace, 4096,
                     channels, l.ranksPerNode};
      EXPECT_EQ(wrongAfter(*comm, run, rng()), 0U) << "p=" << l.p << " ranksPerNode=" << l.ranksPerNode
                                                   << " channels=" << channels << " n=" << n << " inPlace=" << inPlace;
    };
    for (int channels : {1, 3})
      for (bool inPlace : {false, true}) {
        check(channels, 1, inPlace);
        check(channels, static_cast<std::int64_t>(rng() % 5000) * 2 + 3, inPlace);
      }
    check(2, static_cast<std::int64_t>(2 * 131072 + rng() % 100000) | 1, false);  // 2 parts of >= 2 blocks each
  }
  auto comm = makeCommunicator(Backend::Host, {6});
  for (ReduceOp op : kAllReduceOps)
    for (Algorithm a : {Algorithm::Tree, Algorithm::FlatTree}) {
      const Case run{Collective::AllReduce, a, 6, 7919, DataType::Float64, op, false, 512, 2, 2};
      EXPECT_EQ(wrongAfter(*comm, run, 5), 0U) << name(op) << " " << plan::name(a);
    }
}

TEST(HostBackend, EveryTypeAndOp) {
  auto comm = makeCommunicator(Backend::Host, {5});
  for (DataType t : kAllDataTypes)
    for (ReduceOp op : kAllReduceOps)
      for (Algorithm a : {Algorithm::Ring, Algorithm::DoubleBinaryTree, Algorithm::HalvingDoubling,
                          Algorithm::RecursiveDoubling}) {
        const Case run{Collective::AllReduce, a, 5, 7919, t, op, false, 512};
        EXPECT_EQ(wrongAfter(*comm, run, 7), 0U) << name(t) << " " << name(op) << " " << plan::name(a);
      }
}

TEST(HostBackend, OtherCollectivesInAndOutOfPlace) {
  for (int p : {1, 2, 3, 6}) {
    auto comm = makeCommunicator(Backend::Host, {p});
    for (auto [c, a] : {std::pair{Collective::ReduceScatter, Algorithm::Ring}, std::pair{Collective::AllGather, Algorithm::Ring},
                        std::pair{Collective::Broadcast, Algorithm::Chain}, std::pair{Collective::Broadcast, Algorithm::Tree},
                        std::pair{Collective::Reduce, Algorithm::Chain}, std::pair{Collective::Reduce, Algorithm::Tree}})
      for (std::int64_t n : {std::int64_t{0}, std::int64_t{3}, std::int64_t{50021}})
        for (bool inPlace : {false, true}) {
          const Case run{c, a, p, n, DataType::Int32, ReduceOp::Max, inPlace, 1000};
          EXPECT_EQ(wrongAfter(*comm, run, 9), 0U) << plan::name(c) << "/" << plan::name(a) << " p=" << p << " n=" << n
                                                   << " inPlace=" << inPlace;
        }
  }
}

TEST(HostBackend, SlicesSmallerThanAChunkAndManyCallsInARow) {
  auto comm = makeCommunicator(Backend::Host, {4});
  for (int i = 0; i < 50; ++i) {
    const Case run{Collective::AllReduce, i % 2 ? Algorithm::Ring : Algorithm::Tree, 4, 1000 + i, DataType::Float64,
                  ReduceOp::Sum, i % 3 == 0, 64};
    ASSERT_EQ(wrongAfter(*comm, run, static_cast<std::uint64_t>(i)), 0U) << "call " << i;
  }
}

TEST(HostBackend, PerRankCallsFromTheCallersThreads) {
  constexpr int p = 4;
  constexpr std::int64_t n = 12345;
  auto comm = makeCommunicator(Backend::Host, {p});
  const DataSpec spec{DataType::Float32, ReduceOp::Sum, p, 5};
  std::vector<std::vector<float>> in(p, std::vector<float>(n)), out(p, std::vector<float>(n));
  for (int r = 0; r < p; ++r) fillInput(spec, r, 0, n, in[r].data());
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      for (int k = 0; k < 3; ++k) comm->allReduce(r, in[r].data(), out[r].data(), n, DataType::Float32, ReduceOp::Sum);
    });
  for (auto& t : threads) t.join();
  std::vector<float> want(n);
  fillExpectedReduce(spec, 0, n, want.data());
  for (int r = 0; r < p; ++r) EXPECT_EQ(countWrong(DataType::Float32, out[r].data(), want.data(), n), 0U);
}

TEST(HostBackend, ARankThatNeverArrivesTimesOutNamingIt) {
  constexpr int p = 3;
  auto comm = makeCommunicator(Backend::Host, {p});
  std::vector<std::vector<float>> in(p, std::vector<float>(1000, 1.0F)), out(p, std::vector<float>(1000));
  CollectiveOptions o;
  o.algorithm = Algorithm::Ring;
  o.timeout = std::chrono::milliseconds(300);
  std::vector<std::string> errors(p);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int r = 0; r < p - 1; ++r)  // rank 2 never calls
    threads.emplace_back([&, r] {
      try {
        comm->allReduce(r, in[r].data(), out[r].data(), 1000, DataType::Float32, ReduceOp::Sum, o);
      } catch (const TimeoutError& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  bool named = false;
  for (int r = 0; r < p - 1; ++r) {
    EXPECT_FALSE(errors[r].empty()) << "rank " << r << " did not report a timeout";
    named = named || errors[r].find("rank 2") != std::string::npos;
  }
  EXPECT_TRUE(named) << errors[0] << " | " << errors[1];
  EXPECT_THROW(comm->allReduce(0, in[0].data(), out[0].data(), 1000, DataType::Float32, ReduceOp::Sum, o), Error);
}

TEST(HostBackend, StragglerDelaysTheWholeGroup) {
  auto comm = makeCommunicator(Backend::Host, {2});
  std::vector<float> a(16, 1.0F), b(16, 2.0F), oa(16), ob(16);
  const RankBuffers bufs[] = {{a.data(), oa.data()}, {b.data(), ob.data()}};
  CollectiveOptions o;
  o.straggler = {.rank = 1, .startDelay = std::chrono::microseconds(20000)};
  const auto start = std::chrono::steady_clock::now();
  comm->runGroup({Collective::AllReduce, 16, DataType::Float32, ReduceOp::Sum, 0}, bufs, o);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
  EXPECT_EQ(oa[3], 3.0F);
  EXPECT_EQ(ob[3], 3.0F);
}

TEST(HostBackend, RejectsBadArguments) {
  EXPECT_THROW(makeCommunicator(Backend::Host, {0}), InvalidArgument);
  auto comm = makeCommunicator(Backend::Host, {2});
  float x = 0;
  EXPECT_THROW(comm->allReduce(2, &x, &x, 1, DataType::Float32, ReduceOp::Sum), InvalidArgument);
  EXPECT_THROW(comm->allReduce(0, &x, &x, -1, DataType::Float32, ReduceOp::Sum), InvalidArgument);
  CollectiveOptions o;
  o.algorithm = Algorithm::Tree;
  EXPECT_THROW(comm->reduceScatter(0, &x, &x, 1, DataType::Float32, ReduceOp::Sum, o), InvalidArgument);
  EXPECT_THROW(comm->broadcast(0, &x, &x, 1, DataType::Float32, 5), InvalidArgument);
}

TEST(HostBackend, ZeroOnRankClearsExactlyTheRange) {
  auto comm = makeCommunicator(Backend::Host, {2});
  Buffer b = comm->allocate(1, 1001);
  auto* p = static_cast<unsigned char*>(b.data());
  for (std::size_t i = 0; i < 1001; ++i) p[i] = static_cast<unsigned char>(1 + i % 251);
  comm->zeroOnRank(1, p + 3, 997);
  for (std::size_t i = 0; i < 1001; ++i)
    EXPECT_EQ(p[i], (i >= 3 && i < 1000) ? 0 : 1 + i % 251) << "byte " << i;
  EXPECT_THROW(comm->zeroOnRank(2, p, 1), InvalidArgument);
}

}  // namespace
}  // namespace cclab
