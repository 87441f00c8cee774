// Cross-process waits: 10,000 ping-pongs between two processes in order and in bounded time, a wait
// on a peer that never writes times out at its bound naming what it waited for, a peer's abort ends
// a wait at once, and the futex sleep is woken from another process (FUTEX_WAKE is not private).
#include "collectives/proc/shared_wait.h"

#include <gtest/gtest.h>

#include <new>
#include <thread>

#include "collectives/core/errors.h"
#include "collectives/proc/shm_segment.h"
#include "tests/proc/child_process.h"

namespace cclab::proc {
namespace {

using testing::exitedWith;
using testing::forkChild;
using testing::waitChild;

struct Words {
  SharedWord ping, pong, abort;
};

ShmSegment makeWords(Words*& w) {
  ShmSegment seg = ShmSegment::create(segmentName(makeJobId(), 0, "ctrl"), sizeof(Words));
  w = new (seg.data()) Words{};
  return seg;
}

std::chrono::nanoseconds spin() {
  return std::thread::hardware_concurrency() >= 2 ? std::chrono::microseconds(50) : std::chrono::microseconds(0);
}

TEST(ProcWait, TwoProcessesPingPongTenThousandTimesInOrder) {
  constexpr std::uint32_t kRounds = 10000;
  constexpr auto kTimeout = std::chrono::seconds(10);
  Words* w = nullptr;
  ShmSegment seg = makeWords(w);
  const auto start = Clock::now();
  const pid_t child = forkChild([&] {
    for (std::uint32_t i = 1; i <= kRounds; ++i) {
      waitAtLeast(w->ping, i, w->abort, kTimeout, spin(), "rank 0's ping");
      if (w->ping.value.load() != i || w->pong.value.load() != i - 1) return 4;  // nobody ran ahead
      w->pong.store(i);
    }
    return 0;
  });
  for (std::uint32_t i = 1; i <= kRounds; ++i) {
    w->ping.store(i);
    waitAtLeast(w->pong, i, w->abort, kTimeout, spin(), "rank 1's pong");
    ASSERT_EQ(w->pong.value.load(), i);
  }
  EXPECT_TRUE(exitedWith(waitChild(child), 0));
  const auto took = Clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(60));
  std::printf("[ proc ] %u round trips in %.1f ms (%.1f us each)\n", kRounds,
              std::chrono::duration<double, std::milli>(took).count(),
              std::chrono::duration<double, std::micro>(took).count() / kRounds);
}

TEST(ProcWait, AWaitOnAPeerThatNeverWritesTimesOutNamingIt) {
  Words* w = nullptr;
  ShmSegment seg = makeWords(w);
  testing::ReadyPipe done;
  const pid_t child = forkChild([&] {  // a live peer that never writes pong
    (void)done.wait(std::chrono::seconds(20));
    return 0;
  });
  const auto start = Clock::now();
  try {
    waitAtLeast(w->pong, 1, w->abort, std::chrono::milliseconds(200), spin(), "rank 1's pong");
    FAIL() << "the wait did not time out";
  } catch (const TimeoutError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rank 1's pong"), std::string::npos) << msg;
    EXPECT_NE(msg.find("200 ms"), std::string::npos) << msg;
  }
  const auto took = Clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(200));
  EXPECT_LT(took, std::chrono::seconds(3));
  done.signal();
  EXPECT_TRUE(exitedWith(waitChild(child), 0));
}

class ProcWaitAbort : public ::testing::TestWithParam<bool> {};

// With the aborter waking the word (true) or not (false: the sleeper's periodic check finds it).
TEST_P(ProcWaitAbort, APeersAbortEndsTheWaitAtOnce) {
  const bool wakeTheWord = GetParam();
  Words* w = nullptr;
  ShmSegment seg = makeWords(w);
  const pid_t child = forkChild([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (wakeTheWord)
      raiseAbort(w->abort, 7, {&w->pong});
    else
      raiseAbort(w->abort, 7);
    return 0;
  });
  const auto start = Clock::now();
  try {
    waitAtLeast(w->pong, 1, w->abort, std::chrono::seconds(30), spin(), "rank 1's pong");
    FAIL() << "the wait did not end on the abort";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("aborted (code 7) while waiting for rank 1's pong"), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));  // not the 30 s timeout
  EXPECT_TRUE(exitedWith(waitChild(child), 0));
}

INSTANTIATE_TEST_SUITE_P(WakeOrNot, ProcWaitAbort, ::testing::Bool());

TEST(ProcWait, AFutexSleepIsWokenFromAnotherProcess) {
  Words* w = nullptr;
  ShmSegment seg = makeWords(w);
  const pid_t child = forkChild([&] {
    // Wake only once the parent sleeps (a private futex would never see this wake).
    const auto until = Clock::now() + std::chrono::seconds(10);
    while (w->ping.sleepers.load() == 0 && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    w->ping.store(1);
    return 0;
  });
  const auto start = Clock::now();
  w->ping.sleepers.fetch_add(1);
  const auto deadline = start + std::chrono::seconds(10);
  while (w->ping.value.load() == 0 && Clock::now() < deadline)  // a futex may return spuriously
    sleepWhileEqual(w->ping, 0, deadline - Clock::now());
  w->ping.sleepers.fetch_sub(1);
  EXPECT_EQ(w->ping.value.load(), 1U);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(exitedWith(waitChild(child), 0));
}

TEST(ProcWait, CountersCompareAcrossTheWrap) {
  EXPECT_TRUE(reached(5, 5));
  EXPECT_TRUE(reached(2, 0xfffffffeU));  // 2 is four steps past 2^32 - 2
  EXPECT_FALSE(reached(0xfffffffeU, 2));
}

}  // namespace
}  // namespace cclab::proc
