// PauseClock (collectives/core/pause_clock.h): a gap between two checks of a thread longer than
// kStopGap counts only kStopGap; shorter gaps count in full; a wait inside a wait sees the same gaps;
// a clock (re)started later leaves out the gaps before its start. Readings are given (at()), so the
// arithmetic is exact.
#include "collectives/core/pause_clock.h"

#include <gtest/gtest.h>

#include <thread>

namespace cclab {
namespace {

using Clock = PauseClock::Clock;
using std::chrono::milliseconds;
constexpr auto kGap = PauseClock::kStopGap;

TEST(PauseClock, ChecksCloserThanTheStopGapCountInFull) {
  const auto t0 = Clock::now();
  PauseClock clock(t0);
  for (int i = 1; i <= 100; ++i) EXPECT_EQ(clock.at(t0 + i * milliseconds(20)), t0 + i * milliseconds(20));
  EXPECT_EQ(clock.skipped(), Clock::duration::zero());
}

TEST(PauseClock, AGapLongerThanTheStopGapCountsOnlyTheStopGap) {
  const auto t0 = Clock::now();
  PauseClock clock(t0);
  EXPECT_EQ(clock.at(t0 + milliseconds(100)), t0 + milliseconds(100));
  const auto resumed = t0 + milliseconds(100) + std::chrono::seconds(3);  // stopped for 3 s
  EXPECT_EQ(clock.at(resumed), t0 + milliseconds(100) + kGap);
  EXPECT_EQ(clock.skipped(), std::chrono::seconds(3) - kGap);
  // Afterwards time counts again in full: a 1 s deadline taken at t0 passes 1 s of checks after t0.
  const auto deadline = t0 + std::chrono::seconds(1);
  auto at = resumed;
  while (clock.at(at) < deadline) at += milliseconds(10);
  EXPECT_EQ(at - t0, std::chrono::seconds(1) + (std::chrono::seconds(3) - kGap));
}

TEST(PauseClock, AWaitInsideAWaitSeesTheSameGaps) {
  const auto t0 = Clock::now();
  PauseClock outer(t0);
  EXPECT_EQ(outer.at(t0 + milliseconds(10)), t0 + milliseconds(10));
  {
    PauseClock inner(t0 + milliseconds(10));
    EXPECT_EQ(inner.at(t0 + milliseconds(20)), t0 + milliseconds(20));
    EXPECT_EQ(inner.at(t0 + milliseconds(20) + std::chrono::seconds(2)), t0 + milliseconds(20) + kGap);
  }
  const auto t = t0 + milliseconds(30) + std::chrono::seconds(2);
  EXPECT_EQ(outer.at(t), t - (std::chrono::seconds(2) - kGap));  // the inner wait's gap is the outer's too
}

TEST(PauseClock, ARestartLeavesOutWhatCameBefore) {
  const auto t0 = Clock::now();
  PauseClock clock(t0);
  (void)clock.at(t0 + std::chrono::seconds(5));  // a gap skipped in an earlier wait
  const auto t1 = t0 + std::chrono::seconds(60);  // a long time computing: no wait, no gap counted
  clock.restart(t1);
  EXPECT_EQ(clock.skipped(), Clock::duration::zero());
  EXPECT_EQ(clock.at(t1 + milliseconds(50)), t1 + milliseconds(50));
}

TEST(PauseClock, ThreadsKeepTheirOwnGaps) {
  const auto t0 = Clock::now();
  PauseClock here(t0);
  std::thread([t0] {
    PauseClock there(t0);
    (void)there.at(t0 + std::chrono::seconds(4));
    EXPECT_EQ(there.skipped(), std::chrono::seconds(4) - kGap);
  }).join();
  EXPECT_EQ(here.at(t0 + milliseconds(5)), t0 + milliseconds(5));
  EXPECT_EQ(here.skipped(), Clock::duration::zero());
}

TEST(PauseClock, NowFollowsTheSteadyClockWhileTheThreadRuns) {
  PauseClock clock;
  const auto before = Clock::now();
  const auto read = clock.now();
  EXPECT_GE(read, before);
  EXPECT_LE(read, Clock::now());
}

}  // namespace
}  // namespace cclab
