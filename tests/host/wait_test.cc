// The building blocks of the host executor's bounded waits: waitUntil ends at its deadline or an
// abort in every phase (also while spinning), and WorkerPool::runAll's watchdog ends a job that stopped
// moving. Timing checks are bounds (well below the 20 s the unfixed code took), not speed assertions.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "collectives/host/wait.h"
#include "collectives/host/worker_pool.h"

namespace cclab::host {
namespace {

constexpr std::chrono::seconds kLongSpin{20};
constexpr std::chrono::seconds kBound{5};

TEST(HostWait, TheSpinPhaseEndsAtTheDeadline) {
  WaitWord word;
  const std::atomic<bool> abort{false};
  const auto start = Clock::now();
  const auto r = waitUntil(word, [](std::uint32_t v) { return v == 1; }, abort, start + std::chrono::milliseconds(50), kLongSpin);
  EXPECT_EQ(r, WaitResult::TimedOut);
  EXPECT_LT(Clock::now() - start, kBound);
}

TEST(HostWait, TheSpinPhaseLeavesOnAnAbort) {
  WaitWord word;
  std::atomic<bool> abort{false};
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    abort.store(true);
  });
  const auto start = Clock::now();
  const auto r = waitUntil(word, [](std::uint32_t v) { return v == 1; }, abort, start + std::chrono::hours(1), kLongSpin);
  aborter.join();
  EXPECT_EQ(r, WaitResult::Aborted);
  EXPECT_LT(Clock::now() - start, kBound);
}

TEST(HostWait, AValueStoredWhileSpinningIsSeen) {
  WaitWord word;
  const std::atomic<bool> abort{false};
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    word.store(7);
  });
  const auto r = waitUntil(word, [](std::uint32_t v) { return v == 7; }, abort, Clock::now() + std::chrono::seconds(60),
                           std::chrono::milliseconds(100));
  setter.join();
  EXPECT_EQ(r, WaitResult::Ready);
}

// A process allowed one CPU does not spin (its peer shares the CPU: a spin would hold the peer off for a
// scheduler quantum, 120-280 µs per 8-byte call instead of a few); with two CPUs the fallback holds;
// CCLAB_SPIN_US still wins.
TEST(HostWait, OneUsableCpuMeansNoSpin) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  if (CPU_COUNT(&saved) < 2) GTEST_SKIP() << "this process may run on one CPU only";
  constexpr std::chrono::nanoseconds kFallback = std::chrono::microseconds(50);
  unsetenv("CCLAB_SPIN_US");
  EXPECT_EQ(spinFromEnvironment(kFallback), kFallback);
  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  EXPECT_EQ(usableCpus(), 1);
  EXPECT_EQ(spinFromEnvironment(kFallback), std::chrono::nanoseconds(0));
  setenv("CCLAB_SPIN_US", "7", 1);
  EXPECT_EQ(spinFromEnvironment(kFallback), std::chrono::microseconds(7));
  unsetenv("CCLAB_SPIN_US");
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
}

TEST(HostWorkerPool, TheWatchdogEndsAStalledJob) {
  // Rank 2 blocks in something only the watchdog's abort ends (or, without a watchdog, 20 s).
  std::atomic<bool> released{false};
  std::atomic<int> ran{0};
  WorkerPool pool(
      3,
      [&](int r) {
        ++ran;
        if (r != 2) return;
        const auto until = Clock::now() + kLongSpin;
        while (!released.load() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      },
      std::chrono::nanoseconds(0));
  std::vector<int> stalled;
  Watchdog w;
  w.patience = std::chrono::milliseconds(100);
  w.progress = [] { return std::uint64_t{0}; };
  w.abort = [&](const std::vector<int>& running) {
    stalled = running;
    released.store(true);
  };
  const auto start = Clock::now();
  pool.runAll(w);
  EXPECT_LT(Clock::now() - start, kBound);
  EXPECT_EQ(ran.load(), 3);
  EXPECT_EQ(stalled, std::vector<int>{2});
}

TEST(HostWorkerPool, AJobThatKeepsMovingIsNotAborted) {
  std::atomic<std::uint64_t> steps{0};
  WorkerPool pool(
      2,
      [&](int r) {
        if (r != 1) return;
        for (int i = 0; i < 40; ++i) {  // 400 ms of work, progress every 10 ms, patience 100 ms
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          ++steps;
        }
      },
      std::chrono::nanoseconds(0));
  bool aborted = false;
  Watchdog w;
  w.patience = std::chrono::milliseconds(100);
  w.progress = [&] { return steps.load(); };
  w.abort = [&](const std::vector<int>&) { aborted = true; };
  pool.runAll(w);
  EXPECT_FALSE(aborted);
  EXPECT_EQ(steps.load(), 40U);
}

}  // namespace
}  // namespace cclab::host
