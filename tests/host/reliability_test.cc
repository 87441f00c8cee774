// The host backend's reliability edges: a straggler's start delay never outlasts the timeout and ends
// on an abort; a timeout names the rank that never arrived, not the neighbour waited for; slice sizes
// that would cut a call into absurdly many slices are refused; CCLAB_SPIN_US is validated.
// Timing checks are bounds (the failure came within a few timeouts instead of the 20 s delay), never
// speed assertions.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/call/checks.h"
#include "collectives/host/host_communicator.h"

namespace cclab {
namespace {

using plan::Algorithm;
using plan::Collective;
using Clock = std::chrono::steady_clock;

// The delay a straggler would sleep without the fix; the bound every test asserts is far below it.
constexpr std::chrono::seconds kLongDelay{20};
constexpr std::chrono::seconds kBound{5};

struct GroupBuffers {
  explicit GroupBuffers(int p, std::size_t n) : in(p, std::vector<float>(n, 1.0F)), out(p, std::vector<float>(n)) {
    for (int r = 0; r < p; ++r) bufs.push_back({in[r].data(), out[r].data()});
  }
  std::vector<std::vector<float>> in, out;
  std::vector<RankBuffers> bufs;
};

TEST(HostReliability, AStragglerDelayLongerThanTheTimeoutEndsAtTheTimeout) {
  for (int straggler : {0, 1}) {  // rank 0 runs on the caller, rank 1 on a worker
    auto comm = makeCommunicator(Backend::Host, {2});
    GroupBuffers b(2, 64);
    CollectiveOptions o;
    o.timeout = std::chrono::milliseconds(300);
    o.straggler = {.rank = straggler, .startDelay = kLongDelay};
    const auto start = Clock::now();
    try {
      comm->runGroup({Collective::AllReduce, 64, DataType::Float32, ReduceOp::Sum, 0}, b.bufs, o);
      ADD_FAILURE() << "no timeout with straggler " << straggler;
    } catch (const TimeoutError& e) {
      EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(straggler)), std::string::npos) << e.what();
    }
    EXPECT_LT(Clock::now() - start, kBound) << "straggler " << straggler;
  }
}

TEST(HostReliability, AStartDelayIsBoundedByTheTimeoutEvenWithNoPeerWaiting) {
  auto comm = makeCommunicator(Backend::Host, {1});
  float x = 1, y = 0;
  CollectiveOptions o;
  o.timeout = std::chrono::milliseconds(200);
  o.straggler = {.rank = 0, .startDelay = kLongDelay};
  const auto start = Clock::now();
  try {
    comm->allReduce(0, &x, &y, 1, DataType::Float32, ReduceOp::Sum, o);
    ADD_FAILURE() << "a 20 s start delay passed a 200 ms timeout";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("start delay"), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, kBound);
}

TEST(HostReliability, AnAbortEndsAStartDelay) {
  // Rank 1's own timeout is long; rank 0 gives up after 200 ms, and that abort must end rank 1's delay.
  auto comm = makeCommunicator(Backend::Host, {2});
  std::vector<float> in(8, 1.0F), out0(8), out1(8);
  std::string error1;
  const auto start = Clock::now();
  std::thread late([&] {
    CollectiveOptions o;
    o.timeout = std::chrono::seconds(60);
    o.straggler = {.rank = 1, .startDelay = kLongDelay};
    try {
      comm->allReduce(1, in.data(), out1.data(), 8, DataType::Float32, ReduceOp::Sum, o);
    } catch (const TimeoutError& e) {
      error1 = e.what();
    }
  });
  CollectiveOptions o;
  o.timeout = std::chrono::milliseconds(200);
  EXPECT_THROW(comm->allReduce(0, in.data(), out0.data(), 8, DataType::Float32, ReduceOp::Sum, o), TimeoutError);
  late.join();
  EXPECT_LT(Clock::now() - start, kBound);
  EXPECT_NE(error1.find("aborted during its start delay"), std::string::npos) << error1;
}

TEST(HostReliability, AShortStragglerDelayStillDelaysAndSucceeds) {
  auto comm = makeCommunicator(Backend::Host, {3});
  GroupBuffers b(3, 1001);
  CollectiveOptions o;
  o.straggler = {.rank = 2, .startDelay = std::chrono::milliseconds(30)};
  const auto start = Clock::now();
  comm->runGroup({Collective::AllReduce, 1001, DataType::Float32, ReduceOp::Sum, 0}, b.bufs, o);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(30));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(b.out[r][1000], 3.0F) << r;
}

// Ranks 0..p-1 except `late` call the collective from their own threads; every error must name the
// late rank as the one that never arrived, whichever rank timed out first.
void expectLateRankNamed(Collective c, Algorithm a, int p, int late) {
  SCOPED_TRACE(std::string(plan::name(c)) + "/" + std::string(plan::name(a)));
  auto comm = makeCommunicator(Backend::Host, {p});
  constexpr std::int64_t n = 100003;  // 25 slices of 4 KiB: more than a channel's 16 slots
  const std::int64_t outCount = c == Collective::AllGather ? n * p : n;
  std::vector<std::vector<float>> in(p, std::vector<float>(n, 1.0F)), out(p, std::vector<float>(outCount));
  CollectiveOptions o;
  o.algorithm = a;
  o.sliceBytes = 4096;
  o.timeout = std::chrono::milliseconds(400);
  std::vector<std::string> errors(p);
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r) {
    if (r == late) continue;
    threads.emplace_back([&, r] {
      try {
        comm->run(r, {c, n, DataType::Float32, ReduceOp::Sum, 0}, {in[r].data(), out[r].data()}, o);
      } catch (const TimeoutError& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  const std::string want = "rank " + std::to_string(late) + " never arrived";
  int reported = 0;
  for (int r = 0; r < p; ++r) {
    if (errors[r].empty()) continue;
    ++reported;
    EXPECT_NE(errors[r].find(want), std::string::npos) << "rank " << r << ": " << errors[r];
  }
  EXPECT_GE(reported, 2);
}

TEST(HostReliability, ATimeoutNamesTheRankThatNeverArrivedRing) {
  expectLateRankNamed(Collective::AllReduce, Algorithm::Ring, 16, 7);
}

TEST(HostReliability, ATimeoutNamesTheRankThatNeverArrivedTree) {
  expectLateRankNamed(Collective::AllReduce, Algorithm::Tree, 13, 11);
}

TEST(HostReliability, ATimeoutNamesTheRankThatNeverArrivedChain) {
  expectLateRankNamed(Collective::Reduce, Algorithm::Chain, 16, 7);
  expectLateRankNamed(Collective::Broadcast, Algorithm::Chain, 9, 3);
}

TEST(HostReliability, SlicingIntoAbsurdlyManySlicesIsRefused) {
  // 1 GiB of floats with 1-byte slices: 2^28 slices. Refused before any buffer is touched (the
  // pointers below are never dereferenced).
  const std::int64_t n = std::int64_t{1} << 28;
  auto comm = makeCommunicator(Backend::Host, {2});
  static float dummy[2];
  const RankBuffers bufs[] = {{&dummy[0], &dummy[0]}, {&dummy[1], &dummy[1]}};
  CollectiveOptions o;
  o.sliceBytes = 1;
  try {
    comm->runGroup({Collective::AllReduce, n, DataType::Float32, ReduceOp::Sum, 0}, bufs, o);
    ADD_FAILURE() << "--slice 1 on 1 GiB was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("slices"), std::string::npos) << e.what();
  }
  EXPECT_THROW(comm->allReduce(0, &dummy[0], &dummy[0], n, DataType::Float32, ReduceOp::Sum, o), InvalidArgument);
}

TEST(HostReliability, TheSliceLimitIsExact) {
  const CollectiveArgs args{Collective::AllGather, kMaxSlicesPerCall / 3, DataType::Float64, ReduceOp::Sum, 0};
  // All-gather output: 3 x count elements = kMaxSlicesPerCall - 1 of 8 bytes; 8-byte slices fit...
  EXPECT_NO_THROW(checkSlicing(args, 3, 8, host::kDefaultSliceBytes));
  // ...and so do 1-byte slices (never smaller than one element), but 3 more elements do not.
  EXPECT_NO_THROW(checkSlicing(args, 3, 1, host::kDefaultSliceBytes));
  const CollectiveArgs more{Collective::AllGather, kMaxSlicesPerCall / 3 + 1, DataType::Float64, ReduceOp::Sum, 0};
  EXPECT_THROW(checkSlicing(more, 3, 8, host::kDefaultSliceBytes), InvalidArgument);
  EXPECT_NO_THROW(checkSlicing(more, 3, 16, host::kDefaultSliceBytes));
  // The default slice, and whole ops, are never refused for sizes a machine can hold.
  const CollectiveArgs big{Collective::AllReduce, std::int64_t{1} << 34, DataType::Float32, ReduceOp::Sum, 0};
  EXPECT_NO_THROW(checkSlicing(big, 8, 0, host::kDefaultSliceBytes));
  EXPECT_NO_THROW(checkSlicing(big, 8, 0, 0));
}

TEST(HostReliability, SmallButSaneSlicesStillRun) {
  auto comm = makeCommunicator(Backend::Host, {3});
  GroupBuffers b(3, 40009);
  CollectiveOptions o;
  o.sliceBytes = 1;  // 40009 slices of one element: within the limit
  comm->runGroup({Collective::AllReduce, 40009, DataType::Float32, ReduceOp::Sum, 0}, b.bufs, o);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(b.out[r][40008], 3.0F) << r;
}

class SpinEnvironment : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("CCLAB_SPIN_US"); }
};

TEST_F(SpinEnvironment, BadValuesAreRefusedNamingTheVariable) {
  for (const char* bad : {"abc", "", "-5", "12us", "10001", "99999999999999999999", " 5"}) {
    setenv("CCLAB_SPIN_US", bad, 1);
    try {
      (void)makeCommunicator(Backend::Host, {2});
      ADD_FAILURE() << "CCLAB_SPIN_US='" << bad << "' accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("CCLAB_SPIN_US"), std::string::npos) << e.what();
    }
  }
  for (const char* good : {"0", "50", "10000"}) {
    setenv("CCLAB_SPIN_US", good, 1);
    EXPECT_NO_THROW((void)makeCommunicator(Backend::Host, {2})) << good;
  }
}

TEST_F(SpinEnvironment, TheLongestSpinStillTimesOutOnTime) {
  setenv("CCLAB_SPIN_US", "10000", 1);
  auto comm = makeCommunicator(Backend::Host, {2});
  float x = 1, y = 0;
  CollectiveOptions o;
  o.timeout = std::chrono::milliseconds(5);  // shorter than the spin
  const auto start = Clock::now();
  EXPECT_THROW(comm->allReduce(0, &x, &y, 1, DataType::Float32, ReduceOp::Sum, o), TimeoutError);
  EXPECT_LT(Clock::now() - start, kBound);
}

TEST(CudaOrderNames, OneTableParsesAndNamesEveryOrder) {
  for (CudaOrder order : kAllCudaOrders) EXPECT_EQ(parseCudaOrder(name(order)), order);
  EXPECT_EQ(parseCudaOrder("ll"), CudaOrder::LowLatency);
  EXPECT_EQ(cudaOrderNames(), "events, graph, ll");
  try {
    (void)parseCudaOrder("fast");
    ADD_FAILURE();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("events, graph, ll"), std::string::npos) << e.what();
  }
  EXPECT_EQ(CommConfig{}.order, CudaOrder::Events);
}

}  // namespace
}  // namespace cclab
