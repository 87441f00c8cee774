// The process backend's LL path (ShmExecutor::runLl, collectives/proc/shm_ll.cc) across forked
// processes: every small allreduce plan against the exact reference and bit for bit against the slot
// path (run) on the same data, at 2, 3 and 4 ranks, odd counts, several types and ops, many calls in a
// row (the rings wrap many laps), mixed with slot calls; which plans fit; and a rank that never calls
// makes the others stop within the timeout naming it, leaving nothing in /dev/shm.
#include <signal.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/core/test_data.h"
#include "collectives/proc/shm_executor.h"
#include "collectives/proc/stale_sweep.h"
#include "tests/proc/child_process.h"

namespace cclab::proc {
namespace {

using testing::exitedWith;
using testing::forkChild;
using testing::leftovers;
using testing::waitChild;

struct LlCase {
  int nranks;
  plan::Algorithm algo;
  int channels;
  DataType type;
  ReduceOp op;
  int ranksPerNode = 0;  // emulated nodes (hier: two lanes linked by phase deps)
};

constexpr std::size_t kSegmentBytes = 64 * 1024;  // the slot path's buffers: input at 0, output at 16 KiB, scratch at 32 KiB
constexpr std::size_t kOutputAt = 16 * 1024, kScratchAt = 32 * 1024;
constexpr int kCalls = 40;

// Rank `rank`: kCalls calls of random odd counts (the same sequence on every rank), each on LL and on
// the slot path with the same input; exit 0 when every LL result equals the exact reference and the
// slot path's bytes, 4 otherwise, 5 when a plan unexpectedly does not fit.
int runRank(const std::string& job, int rank, const LlCase& c) {
  ShmExecutor ex(job, rank, c.nranks, kSegmentBytes, std::chrono::seconds(20));
  std::mt19937_64 rng(12345);  // same on every rank: the ranks agree on every call's count
  const std::size_t elem = sizeOf(c.type);
  const std::int64_t maxCount = static_cast<std::int64_t>(1024 / elem);  // up to the LL threshold
  ShmRunOptions o;
  o.elemSize = elem;
  o.reduce = hostReduceFn(c.type, c.op);
  o.timeout = std::chrono::seconds(20);
  o.spin = std::chrono::microseconds(0);  // processes may outnumber the cores
  std::vector<std::byte> input, llOut, scratch, expected;
  for (int call = 0; call < kCalls; ++call) {
    std::int64_t count = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(maxCount)) + 1;
    if (count % 2 == 0) --count;  // odd, never a power of two above 1
    const plan::Plan p = plan::makePlan(plan::Collective::AllReduce, c.algo, c.nranks, count, 0, plan::PlanShape{c.channels, c.ranksPerNode});
    if (!ex.llFits(p, elem)) return 5;
    const auto bytes = static_cast<std::size_t>(count) * elem;
    const DataSpec spec{c.type, c.op, c.nranks, 1000 + static_cast<std::uint64_t>(call)};
    input.assign(bytes, std::byte{0});
    fillInput(spec, rank, 0, static_cast<std::size_t>(count), input.data());
    llOut.assign(bytes, std::byte{0xee});
    scratch.assign(static_cast<std::size_t>(p.scratchCount) * elem + 1, std::byte{0});
    const bool inPlace = call % 3 == 2;  // every third call in place
    if (inPlace) {
      llOut = input;
      ex.runLl(p, {llOut.data(), llOut.data(), scratch.data()}, o);
    } else {
      ex.runLl(p, {input.data(), llOut.data(), scratch.data()}, o);
    }
    // The slot path on the same input, in this rank's segment.
    std::memcpy(ex.buffer(), input.data(), bytes);
    ex.run(p, ShmLayout{0, kOutputAt, kScratchAt}, o);
    expected.assign(bytes, std::byte{0});
    fillExpectedReduce(spec, 0, static_cast<std::size_t>(count), expected.data());
    const std::size_t wrong = countWrong(c.type, llOut.data(), expected.data(), static_cast<std::size_t>(count));
    const bool sameBits = std::memcmp(llOut.data(), ex.buffer() + kOutputAt, bytes) == 0;
    if (wrong != 0 || !sameBits) {
      std::fprintf(stderr, "rank %d call %d count %lld: %zu wrong, %s the slot path's bits\n", rank, call,
                   static_cast<long long>(count), wrong, sameBits ? "same as" : "differs from");
      return 4;
    }
  }
  return 0;
}

class ProcShmLl : public ::testing::TestWithParam<LlCase> {};

TEST_P(ProcShmLl, MatchesTheExactReferenceAndTheSlotPathBitForBit) {
  const LlCase c = GetParam();
  const std::string job = makeJobId();
  std::vector<pid_t> kids;
  for (int r = 0; r < c.nranks; ++r) kids.push_back(forkChild([&, r] { return runRank(job, r, c); }));
  for (int r = 0; r < c.nranks; ++r)
    EXPECT_TRUE(exitedWith(waitChild(kids[static_cast<std::size_t>(r)], std::chrono::seconds(60)), 0)) << "rank " << r;
  EXPECT_EQ(leftovers(job), 0);
}

using plan::Algorithm;
INSTANTIATE_TEST_SUITE_P(
    Plans, ProcShmLl,
    ::testing::Values(LlCase{2, Algorithm::RecursiveDoubling, 1, DataType::Float32, ReduceOp::Sum},
                      LlCase{2, Algorithm::OneShot, 1, DataType::Float32, ReduceOp::Sum},
                      LlCase{3, Algorithm::OneShot, 1, DataType::Float64, ReduceOp::Sum},
                      LlCase{4, Algorithm::OneShot, 2, DataType::Float32, ReduceOp::Sum},
                      LlCase{3, Algorithm::TwoShot, 1, DataType::Int32, ReduceOp::Max},
                      LlCase{4, Algorithm::RecursiveDoubling, 1, DataType::Float32, ReduceOp::Prod},
                      LlCase{3, Algorithm::RecursiveDoubling, 1, DataType::Int8, ReduceOp::Sum},
                      LlCase{4, Algorithm::Ring, 2, DataType::Float32, ReduceOp::Sum},
                      LlCase{3, Algorithm::Tree, 1, DataType::BFloat16, ReduceOp::Sum},
                      LlCase{4, Algorithm::DoubleBinaryTree, 2, DataType::Float16, ReduceOp::Min},
                      LlCase{4, Algorithm::HalvingDoubling, 1, DataType::Float32, ReduceOp::Sum},
                      LlCase{4, Algorithm::Hierarchical, 1, DataType::Float32, ReduceOp::Sum, 2},
                      LlCase{4, Algorithm::Hierarchical, 2, DataType::Int32, ReduceOp::Max, 2}));

TEST(ProcShmLl, RingSizeFollowsTheBudgetAndLargePlansDoNotFit) {
  EXPECT_EQ(shmLlRingLines(2), kShmLlMaxRingLines);
  EXPECT_EQ(shmLlRingLines(64), 32);  // 8 MiB / (64^2 x 64 B)
  EXPECT_EQ(shmLlRingLines(256), 0);  // below kShmLlMinRingLines: no LL rings
  const std::string job = makeJobId();
  ShmExecutor ex(job, 0, 1, 4096, std::chrono::seconds(5));
  EXPECT_TRUE(ex.llFits(plan::makePlan(plan::Collective::AllReduce, Algorithm::Ring, 1, 3), 4));
  // Two ranks: one message of 64 lines (2048 bytes) fits a 64-line ring, 65 lines do not.
  const std::string job2 = makeJobId();
  const pid_t peer = forkChild([&] {
    ShmExecutor other(job2, 1, 2, 4096, std::chrono::seconds(5));
    std::this_thread::sleep_for(std::chrono::seconds(1));  // keeps its segment while the parent attaches
    return 0;
  });
  ShmExecutor two(job2, 0, 2, 4096, std::chrono::seconds(5));
  EXPECT_TRUE(two.llFits(plan::makePlan(plan::Collective::AllReduce, Algorithm::OneShot, 2, 512), 4));
  EXPECT_FALSE(two.llFits(plan::makePlan(plan::Collective::AllReduce, Algorithm::OneShot, 2, 520), 4));
  EXPECT_TRUE(exitedWith(waitChild(peer), 0));  // while `two` keeps its segments: the peer attaches to them
}

TEST(ProcShmLl, ARankThatNeverCallsStopsTheOthersNamingIt) {
  const std::string job = makeJobId();
  constexpr int kRanks = 3;
  constexpr auto kTimeout = std::chrono::milliseconds(300);
  const auto start = Clock::now();
  std::vector<pid_t> kids;
  for (int r = 0; r < kRanks; ++r)
    kids.push_back(forkChild([&, r] {
      const plan::Plan p = plan::makePlan(plan::Collective::AllReduce, Algorithm::OneShot, kRanks, 5);
      ShmExecutor ex(job, r, kRanks, 8192, std::chrono::seconds(10));
      if (r == 2) {  // joins, then never calls; keeps its segment until the others are done
        std::this_thread::sleep_for(std::chrono::seconds(2));
        return 0;
      }
      ShmRunOptions o;
      o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
      o.timeout = kTimeout;
      std::vector<float> in(5, 1.0F), out(5);
      try {
        ex.runLl(p, {reinterpret_cast<const std::byte*>(in.data()), reinterpret_cast<std::byte*>(out.data()), nullptr}, o);
      } catch (const TimeoutError& e) {
        const std::string msg = e.what();
        std::fprintf(stderr, "rank %d: %s\n", r, msg.c_str());
        return msg.find("lost rank 2:") != std::string::npos ? 6 : 7;
      }
      return 0;
    }));
  for (int r = 0; r < kRanks; ++r) {
    const int status = waitChild(kids[static_cast<std::size_t>(r)]);
    EXPECT_TRUE(exitedWith(status, r == 2 ? 0 : 6)) << "rank " << r << " status " << status;
  }
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(leftovers(job), 0);
}

// A rank SIGKILLed after joining: the survivors' LL waits notice the death (the liveness rounds of
// waitReady), well before the 20 s timeout, and name it; the parent sweeps its segment.
TEST(ProcShmLl, AKilledRankIsNamedByTheSurvivorsWithinAboutASecond) {
  const std::string job = makeJobId();
  constexpr int kRanks = 3, kVictim = 1;
  testing::ReadyPipe joined;
  const pid_t victim = forkChild([&] {
    ShmExecutor ex(job, kVictim, kRanks, 8192, std::chrono::seconds(10));
    joined.signal();
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return 0;
  });
  std::vector<pid_t> survivors;
  for (int r = 0; r < kRanks; ++r) {
    if (r == kVictim) continue;
    survivors.push_back(forkChild([&, r] {
      ShmExecutor ex(job, r, kRanks, 8192, std::chrono::seconds(10));
      ShmRunOptions o;
      o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
      o.timeout = std::chrono::seconds(20);
      o.spin = std::chrono::microseconds(0);
      std::vector<float> in(7, 1.0F), out(7);
      try {
        ex.runLl(plan::makePlan(plan::Collective::AllReduce, Algorithm::OneShot, kRanks, 7),
                 {reinterpret_cast<const std::byte*>(in.data()), reinterpret_cast<std::byte*>(out.data()), nullptr}, o);
      } catch (const TimeoutError& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
        return std::string(e.what()).find("lost rank 1:") != std::string::npos ? 6 : 7;
      }
      return 0;
    }));
  }
  ASSERT_TRUE(joined.wait());
  const auto start = Clock::now();
  kill(victim, SIGKILL);
  EXPECT_TRUE(testing::killedBy(waitChild(victim), SIGKILL));
  for (pid_t s : survivors) EXPECT_TRUE(exitedWith(waitChild(s), 6));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));  // the timeout is 20 s
  EXPECT_EQ(leftovers(job), 0);  // the names went when the node joined (ShmExecutor)
  EXPECT_EQ(cleanupStaleSegments(job), 0U);
}

}  // namespace
}  // namespace cclab::proc
