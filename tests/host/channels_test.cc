// The host executor with channels: every allreduce algorithm (hier, oneshot and twoshot included) on
// 1, 2 and 4 channels and 1..8 ranks, random floats of awkward counts against a double-precision
// reference; ReduceAll's results bit-identical on every rank; a slow channel does not hold up another
// (asserted on progress, not on time); a timeout with channels still names the rank that never came;
// bad channel and node settings are refused; the plan cache keys on the channels.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/host/host_executor.h"

namespace cclab {
namespace {

using plan::Algorithm;
using plan::Collective;

constexpr Algorithm kAllReduceAlgorithms[] = {Algorithm::Ring,    Algorithm::Tree,         Algorithm::DoubleBinaryTree,
                                              Algorithm::HalvingDoubling, Algorithm::RecursiveDoubling,
                                              Algorithm::Hierarchical, Algorithm::OneShot,  Algorithm::TwoShot};

struct Shape {
  Algorithm algorithm;
  int channels;
  int ranksPerNode;
  std::size_t sliceBytes;
  bool inPlace;
};

// One group allreduce of random floats; checks every rank against the double-precision sum (within
// float rounding of p terms), and, for the ReduceAll algorithms, that all ranks hold the same bits.
void checkAllReduce(Communicator& comm, std::int64_t count, const Shape& s, std::mt19937& rng) {
  const int p = comm.nranks();
  const auto n = static_cast<std::size_t>(count);
  std::uniform_real_distribution<float> dist(-1.0F, 1.0F);
  std::vector<std::vector<float>> in(p, std::vector<float>(n + 1)), out(p, std::vector<float>(n + 1, -7.0F));
  std::vector<double> sum(n, 0.0), mag(n, 0.0);
  std::vector<RankBuffers> bufs(p);
  for (int r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      in[r][i] = dist(rng);
      sum[i] += in[r][i];
      mag[i] += std::fabs(in[r][i]);
    }
    if (s.inPlace) std::memcpy(out[r].data(), in[r].data(), n * sizeof(float));
    bufs[r] = {s.inPlace ? static_cast<const void*>(out[r].data()) : in[r].data(), out[r].data()};
  }
  CollectiveOptions o;
  o.algorithm = s.algorithm;
  o.channels = s.channels;
  o.ranksPerNode = s.ranksPerNode;
  o.sliceBytes = s.sliceBytes;
  o.timeout = std::chrono::seconds(20);
  comm.runGroup({Collective::AllReduce, count, DataType::Float32, ReduceOp::Sum, 0}, bufs, o);
  const std::string what = std::string(plan::name(s.algorithm)) + " p=" + std::to_string(p) + " count=" +
                           std::to_string(count) + " channels=" + std::to_string(s.channels) + " rpn=" +
                           std::to_string(s.ranksPerNode) + " slice=" + std::to_string(s.sliceBytes) +
                           (s.inPlace ? " in place" : "");
  std::size_t wrong = 0;
  for (int r = 0; r < p; ++r)
    for (std::size_t i = 0; i < n; ++i) {
      const double tol = 1e-6 * p * mag[i] + 1e-30;
      if (!(std::fabs(out[r][i] - sum[i]) <= tol) && wrong++ < 3)
        ADD_FAILURE() << what << ": rank " << r << " [" << i << "] = " << out[r][i] << ", want " << sum[i];
    }
  for (int r = 0; r < p; ++r) EXPECT_EQ(out[r][n], -7.0F) << what << ": rank " << r << " wrote past the end";
  if (s.algorithm == Algorithm::OneShot || s.algorithm == Algorithm::TwoShot) {
    for (int r = 1; r < p; ++r)
      EXPECT_EQ(std::memcmp(out[r].data(), out[0].data(), n * sizeof(float)), 0) << what << ": rank " << r
                                                                                   << " differs from rank 0 in bits";
  }
}

TEST(HostChannels, EveryAllReduceAlgorithmOnOneTwoAndFourChannels) {
  std::mt19937 rng(20261203);
  for (int p : {1, 2, 3, 4, 5, 8}) {
    auto comm = makeCommunicator(Backend::Host, {p});
    for (Algorithm a : kAllReduceAlgorithms)
      for (int c : {1, 2, 4})
        for (std::int64_t count : {1, 3, 37, 1001, 4099}) {
          // Small slices on the middle count, so a channel pipelines many slices (and runs out of slots).
          const std::size_t slice = count == 1001 ? 36 : 0;
          const int rpn = (a == Algorithm::Hierarchical && p % 2 == 0) ? 2 : 0;
          checkAllReduce(*comm, count, {a, c, rpn, slice, false}, rng);
          checkAllReduce(*comm, count, {a, c, rpn, slice, true}, rng);
        }
  }
}

TEST(HostChannels, HierarchicalWithTwoRanksPerNodeAndRingsInNodeOrder) {
  std::mt19937 rng(7);
  for (int p : {4, 8}) {
    auto comm = makeCommunicator(Backend::Host, {p});
    for (int c : {1, 2, 4})
      for (std::int64_t count : {5, 999, 65537}) {
        checkAllReduce(*comm, count, {Algorithm::Hierarchical, c, 2, 0, false}, rng);
        checkAllReduce(*comm, count, {Algorithm::Hierarchical, c, 2, 1000, true}, rng);
        checkAllReduce(*comm, count, {Algorithm::Ring, c, 2, 1000, false}, rng);  // ringOrder per channel
      }
  }
  auto comm = makeCommunicator(Backend::Host, {8});
  checkAllReduce(*comm, 4097, {Algorithm::Hierarchical, 2, 4, 512, false}, rng);
}

TEST(HostChannels, ManyCallsInARowWithChangingShapes) {
  // The plan cache is keyed on channels and ranksPerNode: alternating shapes reuse no wrong plan, and
  // the connections of channels a call does not use stay in step.
  std::mt19937 rng(99);
  auto comm = makeCommunicator(Backend::Host, {4});
  for (int i = 0; i < 30; ++i)
    checkAllReduce(*comm, 513 + i, {i % 3 == 0 ? Algorithm::TwoShot : Algorithm::Ring, 1 + i % 4, (i % 2) * 2, 64, i % 2 == 1},
                   rng);
}

// Rank 0 receives on channel 0 from rank 2 and on channel 1 from rank 1. Rank 2 starts only once
// rank 0 has consumed every slice of channel 1. An executor that ran rank 0's channels one after the
// other would wait in channel 0 for rank 2 and never consume channel 1: the gate would never open.
TEST(HostChannels, ASlowChannelDoesNotStallAnother) {
  constexpr int kElems = 37;
  constexpr std::int64_t kSlice = 4;  // 10 slices per channel, fewer than a connection's slots
  constexpr std::uint64_t kSlices = (kElems + kSlice - 1) / kSlice;
  plan::Plan plan;
  plan.collective = Collective::Broadcast;  // any: the executor only reads it for messages
  plan.nranks = 3;
  plan.count = 2 * kElems;
  plan.nchannels = 2;
  plan.ranks.resize(3);
  const plan::Range first{plan::Buf::Output, 0, kElems}, second{plan::Buf::Output, kElems, kElems};
  plan.ranks[0] = {{plan::OpKind::Recv, 2, 0, {}, first, 0}, {plan::OpKind::Recv, 1, 0, {}, second, 1}};
  plan.ranks[1] = {{plan::OpKind::Send, 0, 0, {plan::Buf::Input, 0, kElems}, {}, 1}};
  plan.ranks[2] = {{plan::OpKind::Send, 0, 0, {plan::Buf::Input, 0, kElems}, {}, 0}};

  host::HostExecutor ex(3);
  std::vector<std::vector<float>> in(3, std::vector<float>(kElems)), out(3, std::vector<float>(2 * kElems, 0.0F));
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < kElems; ++i) in[r][i] = static_cast<float>(100 * r + i);
  host::RunOptions o;
  o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
  o.sliceElems = kSlice;
  o.timeout = std::chrono::seconds(20);
  std::vector<std::string> errors(3);
  auto runRank = [&](int r) {
    try {
      ex.run(r, plan, {reinterpret_cast<const std::byte*>(in[r].data()), reinterpret_cast<std::byte*>(out[r].data()), nullptr},
             o);
    } catch (const std::exception& e) {
      errors[r] = e.what();
    }
  };
  std::thread t0(runRank, 0), t1(runRank, 1);
  // Channel 1 complete: rank 1 posted every slice and rank 0 consumed every one. Bounded poll (a
  // liveness bound, not a timing assertion: a channel-sequential executor never gets there).
  const std::uint64_t target = 2 * kSlices;
  const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ex.progress() < target && std::chrono::steady_clock::now() < giveUp)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::uint64_t before = ex.progress();
  std::thread t2(runRank, 2);
  t0.join();
  t1.join();
  t2.join();
  EXPECT_EQ(before, target) << "rank 0 did not finish channel 1 while channel 0 waited for rank 2";
  for (int r = 0; r < 3; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  for (int i = 0; i < kElems; ++i) {
    EXPECT_EQ(out[0][i], in[2][i]);
    EXPECT_EQ(out[0][kElems + i], in[1][i]);
  }
}

TEST(HostChannels, ATimeoutWithChannelsNamesTheRankThatNeverArrived) {
  constexpr int p = 4;
  for (Algorithm a : {Algorithm::Ring, Algorithm::TwoShot}) {
    auto comm = makeCommunicator(Backend::Host, {p});
    std::vector<std::vector<float>> in(p, std::vector<float>(1000, 1.0F)), out(p, std::vector<float>(1000));
    CollectiveOptions o;
    o.algorithm = a;
    o.sliceBytes = 256;
    o.timeout = std::chrono::milliseconds(300);
    {  // the same call on one channel first: its plan is cached, and must not be reused for 4 channels
      std::vector<RankBuffers> bufs;
      for (int r = 0; r < p; ++r) bufs.push_back({in[r].data(), out[r].data()});
      o.channels = 1;
      comm->runGroup({Collective::AllReduce, 1000, DataType::Float32, ReduceOp::Sum, 0}, bufs, o);
      EXPECT_EQ(out[1][999], static_cast<float>(p));
    }
    o.channels = 4;
    std::vector<std::string> errors(p);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int r = 0; r < p - 1; ++r)  // rank 3 never calls
      threads.emplace_back([&, r] {
        try {
          comm->allReduce(r, in[r].data(), out[r].data(), 1000, DataType::Float32, ReduceOp::Sum, o);
        } catch (const TimeoutError& e) {
          errors[r] = e.what();
        }
      });
    for (auto& t : threads) t.join();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    bool named = false, channel = false;
    for (int r = 0; r < p - 1; ++r) {
      EXPECT_FALSE(errors[r].empty()) << plan::name(a) << ": rank " << r << " did not report a timeout";
      named = named || errors[r].find("rank 3 never arrived") != std::string::npos;
      channel = channel || errors[r].find("(channel ") != std::string::npos;  // a 4-channel plan ran
    }
    EXPECT_TRUE(named) << errors[0] << " | " << errors[1] << " | " << errors[2];
    EXPECT_TRUE(channel) << errors[0] << " | " << errors[1] << " | " << errors[2];
  }
}

TEST(HostChannels, RefusesBadChannelsAndNodeSizes) {
  auto comm = makeCommunicator(Backend::Host, {4});
  float x[4] = {}, y[4] = {};
  auto call = [&](int channels, int rpn, Algorithm a) {
    CollectiveOptions o;
    o.channels = channels;
    o.ranksPerNode = rpn;
    o.algorithm = a;
    comm->allReduce(0, x, y, 4, DataType::Float32, ReduceOp::Sum, o);
  };
  EXPECT_THROW(call(-1, 0, Algorithm::Ring), InvalidArgument);
  EXPECT_THROW(call(plan::kMaxChannels + 1, 0, Algorithm::Ring), InvalidArgument);
  EXPECT_THROW(call(1, -2, Algorithm::Ring), InvalidArgument);
  EXPECT_THROW(call(1, 3, Algorithm::Hierarchical), InvalidArgument);
  EXPECT_FALSE(comm->arrivalStats()->calls);  // refused before any rank started
}

}  // namespace
}  // namespace cclab
