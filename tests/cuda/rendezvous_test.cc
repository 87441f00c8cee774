// Per-rank calls meeting in the rendezvous: the last rank issues for all, errors reach every rank,
// a rank that never arrives is named in a TimeoutError, disagreeing calls are rejected, and a process
// stopped (SIGSTOP) longer than the timeout while a rank waits does not time out on resume.
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "collectives/cuda/rendezvous.h"
#include "tests/proc/child_process.h"

namespace cclab::cuda {
namespace {

CollectiveArgs allReduce(std::int64_t count) { return {plan::Collective::AllReduce, count, DataType::Float32, ReduceOp::Sum, 0}; }

CollectiveOptions withTimeout(std::chrono::milliseconds t) {
  CollectiveOptions o;
  o.timeout = t;
  return o;
}

TEST(Rendezvous, LastRankIssuesOnceWithEveryRanksBuffers) {
  constexpr int kRanks = 5;
  Rendezvous rv(kRanks);
  std::atomic<int> issues{0};
  std::vector<int> marks(kRanks);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r)
      threads.emplace_back([&, r] {
        rv.arrive(r, allReduce(7), {&marks[r], &marks[r]}, withTimeout(std::chrono::seconds(10)),
                  [&](const CollectiveArgs& a, std::span<const RankBuffers> b, const CollectiveOptions&) {
                    EXPECT_EQ(a.count, 7);
                    ASSERT_EQ(b.size(), static_cast<std::size_t>(kRanks));
                    for (int q = 0; q < kRanks; ++q) EXPECT_EQ(b[q].send, &marks[q]);
                    ++issues;
                  });
      });
    for (auto& t : threads) t.join();
  }
  EXPECT_EQ(issues.load(), 20);
}

TEST(Rendezvous, AnIssueErrorReachesEveryRank) {
  constexpr int kRanks = 3;
  Rendezvous rv(kRanks);
  std::atomic<int> caught{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      try {
        rv.arrive(r, allReduce(1), {}, withTimeout(std::chrono::seconds(10)),
                  [](const CollectiveArgs&, std::span<const RankBuffers>, const CollectiveOptions&) {
                    throw InvalidArgument("bad buffers");
                  });
      } catch (const InvalidArgument&) {
        ++caught;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(caught.load(), kRanks);
}

TEST(Rendezvous, ARankThatNeverArrivesIsNamed) {
  Rendezvous rv(3);
  std::vector<std::string> messages(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      try {
        rv.arrive(r, allReduce(1), {}, withTimeout(std::chrono::milliseconds(100)),
                  [](const CollectiveArgs&, std::span<const RankBuffers>, const CollectiveOptions&) {});
      } catch (const TimeoutError& e) {
        messages[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const std::string& m : messages) EXPECT_NE(m.find("rank(s) 2"), std::string::npos) << m;
  // The rendezvous is usable again afterwards.
  std::atomic<int> issued{0};
  std::vector<std::thread> again;
  for (int r = 0; r < 3; ++r)
    again.emplace_back([&, r] {
      rv.arrive(r, allReduce(1), {}, withTimeout(std::chrono::seconds(10)),
                [&](const CollectiveArgs&, std::span<const RankBuffers>, const CollectiveOptions&) { ++issued; });
    });
  for (auto& t : again) t.join();
  EXPECT_EQ(issued.load(), 1);
}

// In a child process rank 0 waits (1 s timeout) while rank 1 waits for the parent's word on a pipe;
// the parent stops the child for 2 s, resumes it, and only then lets rank 1 arrive.
TEST(Rendezvous, AWaitStoppedLongerThanTheTimeoutEndsOnceResumed) {
  proc::testing::ReadyPipe started, go;
  const pid_t child = proc::testing::forkChild([&] {
    Rendezvous rv(2);
    const auto none = [](const CollectiveArgs&, std::span<const RankBuffers>, const CollectiveOptions&) {};
    std::thread late([&] {
      if (go.wait(std::chrono::seconds(20))) rv.arrive(1, allReduce(1), {}, withTimeout(std::chrono::seconds(1)), none);
    });
    int rc = 0;
    try {
      started.signal();
      rv.arrive(0, allReduce(1), {}, withTimeout(std::chrono::seconds(1)), none);
    } catch (const TimeoutError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      rc = 5;
    }
    late.join();
    return rc;
  });
  ASSERT_TRUE(started.wait());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // rank 0 waits
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, WUNTRACED), child);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_EQ(kill(child, SIGCONT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // resumed, past the wall-clock deadline
  go.signal();
  EXPECT_TRUE(proc::testing::exitedWith(proc::testing::waitChild(child), 0)) << "5: rank 0 timed out on resume";
}

TEST(Rendezvous, RejectsDisagreeingCallsAndBadRanks) {
  Rendezvous rv(2);
  auto noop = [](const CollectiveArgs&, std::span<const RankBuffers>, const CollectiveOptions&) {};
  std::thread first([&] {
    EXPECT_THROW(rv.arrive(0, allReduce(4), {}, withTimeout(std::chrono::milliseconds(300)), noop), TimeoutError);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_THROW(rv.arrive(1, allReduce(5), {}, withTimeout(std::chrono::milliseconds(300)), noop), InvalidArgument);
  first.join();
  EXPECT_THROW(rv.arrive(2, allReduce(4), {}, withTimeout(std::chrono::milliseconds(10)), noop), InvalidArgument);
}

}  // namespace
}  // namespace cclab::cuda
