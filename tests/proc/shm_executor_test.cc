// The shared-memory executor across forked processes: ring allreduce (and the other allreduce plans,
// several channels, and oneshot/twoshot with ReduceAll) against the exact reference for p = 2, 3, 4 and
// odd counts, sliced and whole, leaving nothing in /dev/shm; a rank that never runs makes the others
// stop within the timeout naming it, and a killed rank's segments are swept by the parent.
#include "collectives/proc/shm_executor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/core/test_data.h"
#include "collectives/proc/stale_sweep.h"
#include "tests/proc/child_process.h"

namespace cclab::proc {
namespace {

using testing::exitedWith;
using testing::forkChild;
using testing::leftovers;
using testing::waitChild;

struct Case {
  int nranks;
  std::int64_t count;
  std::int64_t slice;
  DataType type;
  ReduceOp op;
  plan::Algorithm algo = plan::Algorithm::Ring;
  int channels = 1;
  int ranksPerNode = 0;  // emulated nodes (hier's lanes)
};

plan::Plan planFor(const Case& c) {
  // hier: 3 blocks (PlanShape::blocks; the automatic choice needs far more elements for B >= 2)
  return plan::makePlan(plan::Collective::AllReduce, c.algo, c.nranks, c.count, 0, plan::PlanShape{c.channels, c.ranksPerNode, 3});
}

constexpr std::size_t align64(std::size_t n) { return (n + 63) / 64 * 64; }

ShmLayout layoutFor(const Case& c) {
  const auto bytes = static_cast<std::size_t>(c.count) * sizeOf(c.type);
  return ShmLayout{0, align64(bytes), 2 * align64(bytes)};
}

std::size_t segmentBytesFor(const Case& c) {
  const plan::Plan p = planFor(c);
  return layoutFor(c).scratch + static_cast<std::size_t>(p.scratchCount) * sizeOf(c.type) + 64;
}

// One call on `ex`: fill the input (from `seed`), run the plan, count wrong elements. 0: right, 4: wrong.
int runCall(ShmExecutor& ex, const Case& c, std::uint64_t seed, std::chrono::nanoseconds timeout) {
  const plan::Plan p = planFor(c);
  const ShmLayout layout = layoutFor(c);
  const DataSpec spec{c.type, c.op, c.nranks, seed};
  fillInput(spec, ex.rank(), 0, static_cast<std::size_t>(c.count), ex.buffer() + layout.input);
  ShmRunOptions o;
  o.elemSize = sizeOf(c.type);
  o.reduce = hostReduceFn(c.type, c.op);
  o.sliceElems = c.slice;
  o.timeout = timeout;
  o.spin = std::chrono::microseconds(0);  // processes may outnumber the cores
  ex.run(p, layout, o);
  std::vector<std::byte> expected(static_cast<std::size_t>(c.count) * o.elemSize);
  fillExpectedReduce(spec, 0, static_cast<std::size_t>(c.count), expected.data());
  const std::size_t wrong = countWrong(c.type, ex.buffer() + layout.output, expected.data(), static_cast<std::size_t>(c.count));
  if (wrong != 0) std::fprintf(stderr, "rank %d: %zu of %lld wrong\n", ex.rank(), wrong, static_cast<long long>(c.count));
  return wrong == 0 ? 0 : 4;
}

// Rank `rank`'s body (exit codes: runCall's, or 3 for an exception through forkChild).
int runRank(const std::string& job, int rank, const Case& c, std::chrono::nanoseconds timeout) {
  ShmExecutor ex(job, rank, c.nranks, segmentBytesFor(c), timeout);
  return runCall(ex, c, 17, timeout);
}

void runJob(const Case& c) {
  const std::string job = makeJobId();
  std::vector<pid_t> kids;
  for (int r = 0; r < c.nranks; ++r)
    kids.push_back(forkChild([&, r] { return runRank(job, r, c, std::chrono::seconds(20)); }));
  for (int r = 0; r < c.nranks; ++r) EXPECT_TRUE(exitedWith(waitChild(kids[static_cast<std::size_t>(r)]), 0)) << "rank " << r;
  EXPECT_EQ(leftovers(job), 0);
}

class ProcShmRing : public ::testing::TestWithParam<Case> {};

TEST_P(ProcShmRing, MatchesTheExactReference) { runJob(GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Sizes, ProcShmRing,
    ::testing::Values(Case{2, 1, 0, DataType::Float32, ReduceOp::Sum}, Case{2, 1001, 64, DataType::Float32, ReduceOp::Sum},
                      Case{3, 7, 0, DataType::Float32, ReduceOp::Sum}, Case{3, 100003, 4099, DataType::Float64, ReduceOp::Sum},
                      Case{3, 1001, 13, DataType::Int32, ReduceOp::Max}, Case{4, 3, 0, DataType::Float32, ReduceOp::Sum},
                      Case{4, 65537, 1000, DataType::Float32, ReduceOp::Sum}, Case{4, 4097, 0, DataType::Int8, ReduceOp::Sum},
                      Case{4, 999, 7, DataType::Float32, ReduceOp::Prod},
                      Case{3, 1001, 64, DataType::Float32, ReduceOp::Sum, plan::Algorithm::Tree},
                      Case{3, 1001, 64, DataType::Float32, ReduceOp::Sum, plan::Algorithm::FlatTree},
                      // NCCL's tree: up and down lanes linked by deps over 3 blocks (walked phase by
                      // phase), a chain per emulated node and a binary tree between 2, 3 and 4 nodes.
                      Case{4, 40009, 1000, DataType::Float32, ReduceOp::Sum, plan::Algorithm::Tree, 1, 2},
                      Case{6, 30011, 0, DataType::Float64, ReduceOp::Sum, plan::Algorithm::Tree, 2, 2},
                      Case{8, 40009, 777, DataType::Int32, ReduceOp::Max, plan::Algorithm::Tree, 1, 2},
                      Case{6, 9973, 64, DataType::Float32, ReduceOp::Prod, plan::Algorithm::Tree, 3, 3},
                      Case{4, 1001, 64, DataType::Float32, ReduceOp::Sum, plan::Algorithm::HalvingDoubling},
                      // Channels one after the other over one connection per pair, and ReduceAll.
                      Case{4, 1001, 64, DataType::Float32, ReduceOp::Sum, plan::Algorithm::Ring, 2},
                      Case{3, 4099, 0, DataType::Float32, ReduceOp::Sum, plan::Algorithm::Ring, 4},
                      Case{4, 1001, 64, DataType::Float32, ReduceOp::Sum, plan::Algorithm::DoubleBinaryTree},
                      Case{3, 1001, 64, DataType::Float32, ReduceOp::Sum, plan::Algorithm::OneShot},
                      Case{4, 4097, 100, DataType::Float32, ReduceOp::Sum, plan::Algorithm::OneShot, 2},
                      Case{3, 1001, 13, DataType::Int32, ReduceOp::Max, plan::Algorithm::TwoShot},
                      Case{4, 65537, 1000, DataType::Float32, ReduceOp::Sum, plan::Algorithm::TwoShot, 4},
                      // hier: two lanes linked by phase deps over B >= 2 blocks, walked phase by phase
                      // (sequentialOps), on 8 ranks in emulated nodes of 2 and 4; every op.
                      Case{8, 40009, 1000, DataType::Float32, ReduceOp::Sum, plan::Algorithm::Hierarchical, 1, 2},
                      Case{8, 3 * 16384 + 5, 0, DataType::Float32, ReduceOp::Prod, plan::Algorithm::Hierarchical, 1, 4},
                      Case{8, 40009, 4099, DataType::Float32, ReduceOp::Min, plan::Algorithm::Hierarchical, 2, 4},
                      Case{8, 3 * 16384 + 5, 777, DataType::Int32, ReduceOp::Max, plan::Algorithm::Hierarchical, 1, 2},
                      Case{4, 3 * 16384 + 5, 1000, DataType::Float64, ReduceOp::Sum, plan::Algorithm::Hierarchical, 2, 2}));

TEST(ProcShmExecutor, HierarchicalCasesReallyHavePhaseDepsAndSeveralBlocks) {
  // The hier cases above are only a test of deps if their plans have them.
  for (const Case& c : {Case{8, 40009, 0, DataType::Float32, ReduceOp::Sum, plan::Algorithm::Hierarchical, 2, 4},
                        Case{8, 3 * 16384 + 5, 0, DataType::Float32, ReduceOp::Sum, plan::Algorithm::Hierarchical, 1, 2}}) {
    EXPECT_FALSE(planFor(c).deps.empty());
    EXPECT_EQ(planFor(c).nphases, 3 + 2);  // B = 3 blocks
  }
}

TEST(ProcShmExecutor, RunsManyCallsInARow) {
  // The channel counters carry on across calls: five allreduces, one check at the end of each.
  const std::string job = makeJobId();
  const Case c{3, 513, 32, DataType::Float32, ReduceOp::Sum};
  std::vector<pid_t> kids;
  for (int r = 0; r < 3; ++r)
    kids.push_back(forkChild([&, r] {
      ShmExecutor ex(job, r, c.nranks, segmentBytesFor(c), std::chrono::seconds(20));
      for (std::uint64_t call = 0; call < 5; ++call)  // new data each call: a stale result is caught
        if (runCall(ex, c, 100 + call, std::chrono::seconds(20)) != 0) return 4;
      return 0;
    }));
  for (pid_t k : kids) EXPECT_TRUE(exitedWith(waitChild(k), 0));
  EXPECT_EQ(leftovers(job), 0);
}

TEST(ProcShmExecutor, ARankThatNeverRunsStopsTheOthersNamingIt) {
  const std::string job = makeJobId();
  constexpr int kRanks = 3;
  constexpr auto kTimeout = std::chrono::milliseconds(300);
  const auto start = Clock::now();
  std::vector<pid_t> kids;
  for (int r = 0; r < kRanks; ++r)
    kids.push_back(forkChild([&, r] {
      const plan::Plan p = plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Ring, kRanks, 1000);
      ShmExecutor ex(job, r, kRanks, 8192, std::chrono::seconds(10));
      if (r == 2) {  // joins, then never calls run(); keeps its segment until the others are done
        std::this_thread::sleep_for(std::chrono::seconds(2));
        return 0;
      }
      ShmRunOptions o;
      o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
      o.timeout = kTimeout;
      try {
        ex.run(p, ShmLayout{0, 4096, 8192}, o);
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

// Rank `victimRank` SIGKILLed after joining: its peers notice the death (not the 20 s timeout), every
// survivor names it, and no segment file is left (names are removed once every rank has joined).
void killOneRank(int ranks, int victimRank) {
  const std::string job = makeJobId();
  const int kVictim = victimRank;
  testing::ReadyPipe joined;
  const pid_t victim = forkChild([&] {
    ShmExecutor ex(job, kVictim, ranks, 8192, std::chrono::seconds(10));
    joined.signal();
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return 0;
  });
  std::vector<pid_t> survivors;
  for (int r = 0; r < ranks; ++r) {
    if (r == kVictim) continue;
    survivors.push_back(forkChild([&, r] {
      ShmExecutor ex(job, r, ranks, 8192, std::chrono::seconds(10));
      ShmRunOptions o;
      o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
      o.timeout = std::chrono::seconds(20);
      try {
        ex.run(plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Ring, ranks, 1000), ShmLayout{0, 4096, 8192}, o);
      } catch (const TimeoutError& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
        const std::string lost = "lost rank " + std::to_string(kVictim) + ":";
        return std::string(e.what()).find(lost) != std::string::npos ? 6 : 7;
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
  EXPECT_EQ(leftovers(job), 0);
  EXPECT_EQ(cleanupStaleSegments(job), 0U);  // nothing for the sweep: the names went at the join
}

TEST(ProcShmExecutor, AKilledRanksPeerNoticesTheDeathAndNoSegmentIsLeft) { killOneRank(2, 1); }
TEST(ProcShmExecutor, AKilledRankIsNamedByEverySurvivor) { killOneRank(4, 1); }
TEST(ProcShmExecutor, AKilledRankZeroOwnerOfTheControlSegmentIsNamedAndNothingIsLeft) { killOneRank(3, 0); }

// A survivor that reaches run() only after a peer already aborted the job (it was slow to start) must
// still stop with a TimeoutError naming the lost rank, like the survivors that were waiting.
TEST(ProcShmExecutor, ASurvivorThatCallsAfterTheAbortNamesTheLostRank) {
  const std::string job = makeJobId();
  constexpr int kRanks = 3;
  testing::ReadyPipe joined0, joined1, go0;
  const auto plan = plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Ring, kRanks, 1000);
  ShmRunOptions o;
  o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
  o.timeout = std::chrono::seconds(20);
  const auto lostRankOne = [&](ShmExecutor& ex) {
    try {
      ex.run(plan, ShmLayout{0, 4096, 8192}, o);
    } catch (const TimeoutError& e) {
      std::fprintf(stderr, "rank %d: %s\n", ex.rank(), e.what());
      return std::string(e.what()).find("lost rank 1:") != std::string::npos ? 6 : 7;
    }
    return 0;
  };
  const pid_t rank0 = forkChild([&] {  // the slow one: in a ring of 3 it receives from rank 2
    ShmExecutor ex(job, 0, kRanks, 8192, std::chrono::seconds(10));
    joined0.signal();
    if (!go0.wait()) return 8;
    return lostRankOne(ex);
  });
  const pid_t rank1 = forkChild([&] {
    ShmExecutor ex(job, 1, kRanks, 8192, std::chrono::seconds(10));
    joined1.signal();
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return 0;
  });
  const pid_t rank2 = forkChild([&] {  // receives from rank 1: it sees the death
    ShmExecutor ex(job, 2, kRanks, 8192, std::chrono::seconds(10));
    return lostRankOne(ex);
  });
  ASSERT_TRUE(joined0.wait());
  ASSERT_TRUE(joined1.wait());
  kill(rank1, SIGKILL);
  EXPECT_TRUE(testing::killedBy(waitChild(rank1), SIGKILL));
  EXPECT_TRUE(exitedWith(waitChild(rank2), 6));  // rank 2 saw the death and aborted the job
  go0.signal();                                  // only now does rank 0 call
  EXPECT_TRUE(exitedWith(waitChild(rank0), 6));
  EXPECT_EQ(leftovers(job), 0);
  EXPECT_EQ(cleanupStaleSegments(job), 0U);
}

// A rank stopped (SIGSTOP) before its call is named by the others at their timeout; resumed, it stops
// too, naming the rank that stopped the job and not blaming itself ("rank 2 lost rank 2").
TEST(ProcShmExecutor, AStoppedRankIsNamedByTheOthersAndDoesNotBlameItselfOnceResumed) {
  const std::string job = makeJobId();
  constexpr int kRanks = 3;
  testing::ReadyPipe joined;
  const auto plan = plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Ring, kRanks, 1000);
  ShmRunOptions o;
  o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
  o.timeout = std::chrono::milliseconds(300);
  std::vector<pid_t> kids;
  for (int r = 0; r < kRanks; ++r)
    kids.push_back(forkChild([&, r] {
      ShmExecutor ex(job, r, kRanks, 8192, std::chrono::seconds(10));
      if (r == 2) {
        joined.signal();
        raise(SIGSTOP);  // until the parent sends SIGCONT, after the others have ended
      }
      try {
        ex.run(plan, ShmLayout{0, 4096, 8192}, o);
      } catch (const TimeoutError& e) {
        const std::string msg = e.what();
        std::fprintf(stderr, "rank %d: %s\n", r, msg.c_str());
        if (r != 2) return msg.find("lost rank 2:") != std::string::npos ? 6 : 7;
        return msg.find("lost") == std::string::npos && msg.find("stopped by rank") != std::string::npos ? 6 : 7;
      }
      return 0;
    }));
  ASSERT_TRUE(joined.wait());
  EXPECT_TRUE(exitedWith(waitChild(kids[0]), 6));
  EXPECT_TRUE(exitedWith(waitChild(kids[1]), 6));
  kill(kids[2], SIGCONT);
  EXPECT_TRUE(exitedWith(waitChild(kids[2]), 6));
  EXPECT_EQ(leftovers(job), 0);
}

TEST(ProcShmExecutor, JoiningAJobWhosePeerNeverComesTimesOutNamingItsSegment) {
  const std::string job = makeJobId();
  const auto start = Clock::now();
  try {
    ShmExecutor ex(job, 0, 3, 4096, std::chrono::milliseconds(200));
    FAIL() << "joined a job without its other ranks";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find(segmentName(job, 1, "buf")), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  EXPECT_EQ(leftovers(job), 0);  // its own control and buffer segments went with the exception
}

TEST(ProcShmExecutor, RefusesBuffersThatDoNotFit) {
  const std::string job = makeJobId();
  ShmExecutor ex(job, 0, 1, 100, std::chrono::seconds(1));
  ShmRunOptions o;
  o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
  EXPECT_THROW(ex.run(plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Ring, 1, 26), ShmLayout{0, 0, 0}, o),
               InvalidArgument);
  EXPECT_THROW(ShmExecutor(job, 1, 1, 100, std::chrono::seconds(1)), InvalidArgument);
}

}  // namespace
}  // namespace cclab::proc
