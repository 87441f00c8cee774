// The polling waits (collectives/core/poll_wait.h): boundedPoll ends Ready at the first poll that
// holds, Aborted on the abort, TimedOut at its deadline and never before; IdlePoll times out only after
// `timeout` without progress and starts over on progress; the backoff spins, yields, then sleeps; and a
// gap longer than PauseClock::kStopGap (the thread did not run) counts only kStopGap toward either.
#include "collectives/core/poll_wait.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace cclab {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
constexpr auto kNever = [] { return false; };

TEST(BoundedPoll, ReadyAtTheFirstPollThatHolds) {
  int polls = 0;
  const auto r = boundedPoll([&] { return ++polls == 7; }, kNever, Clock::now() + std::chrono::seconds(30), PollBackoff{});
  EXPECT_EQ(r, WaitResult::Ready);
  EXPECT_EQ(polls, 7);
}

TEST(BoundedPoll, ReadyBeforeAPassedDeadlineIsChecked) {
  int polls = 0;
  const auto r = boundedPoll([&] { return ++polls >= 1; }, kNever, Clock::now() - std::chrono::seconds(1), PollBackoff{});
  EXPECT_EQ(r, WaitResult::Ready);
  EXPECT_EQ(polls, 1);
}

TEST(BoundedPoll, ReadyWhenAnotherThreadSetsWhatItPolls) {
  std::atomic<bool> flag{false};
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(20));
    flag.store(true, std::memory_order_release);
  });
  const auto r = boundedPoll([&] { return flag.load(std::memory_order_acquire); }, kNever, Clock::now() + std::chrono::seconds(30),
                             PollBackoff{.spin = std::chrono::microseconds(50)});
  setter.join();
  EXPECT_EQ(r, WaitResult::Ready);
}

TEST(BoundedPoll, TimesOutAtTheDeadlineNotBefore) {
  const auto deadline = Clock::now() + milliseconds(30);
  int polls = 0;
  const auto r = boundedPoll([&] { return ++polls < 0; }, kNever, deadline, PollBackoff{.spin = std::chrono::microseconds(50)});
  const auto end = Clock::now();
  EXPECT_EQ(r, WaitResult::TimedOut);
  EXPECT_GE(end, deadline);
  EXPECT_LT(end, deadline + std::chrono::seconds(5));  // and it ends
  EXPECT_GT(polls, 1);                                 // it kept polling until then
}

TEST(BoundedPoll, AbortedAtTheFirstCheckThatSaysSo) {
  int polls = 0, checks = 0;
  const auto r = boundedPoll([&] { return ++polls < 0; }, [&] { return ++checks == 5; }, Clock::now() + std::chrono::seconds(30),
                             PollBackoff{});
  EXPECT_EQ(r, WaitResult::Aborted);
  EXPECT_EQ(checks, 5);
  EXPECT_EQ(polls, 5);  // the abort is checked after every poll that failed
}

TEST(BoundedPoll, AnAbortWinsOverAPassedDeadline) {
  const auto r = boundedPoll([] { return false; }, [] { return true; }, Clock::now() - std::chrono::seconds(1), PollBackoff{});
  EXPECT_EQ(r, WaitResult::Aborted);
}

TEST(BoundedPoll, SleepsBetweenPollsAfterTheYieldWindow) {
  // No spin, no yield: every round sleeps 10 ms, so 100 ms hold about 10 polls, not thousands.
  int polls = 0;
  const auto r = boundedPoll([&] { return ++polls < 0; }, kNever, Clock::now() + milliseconds(100),
                             PollBackoff{.spin = {}, .yieldUntil = {}, .sleep = milliseconds(10)});
  EXPECT_EQ(r, WaitResult::TimedOut);
  EXPECT_GE(polls, 2);
  EXPECT_LE(polls, 12);
}

TEST(PollBackoff, SpinsThenYieldsThenSleeps) {
  const PollBackoff b{.spin = milliseconds(1), .yieldUntil = milliseconds(2), .sleep = milliseconds(300)};
  auto took = [&](std::chrono::nanoseconds elapsed) {
    const auto t0 = Clock::now();
    b.pause(elapsed);
    return Clock::now() - t0;
  };
  EXPECT_LT(took(std::chrono::microseconds(500)), milliseconds(300));  // busy: no sleep
  EXPECT_LT(took(std::chrono::microseconds(1500)), milliseconds(300));  // yield: no sleep
  EXPECT_GE(took(milliseconds(3)), milliseconds(300));                 // then the sleep
  const PollBackoff yieldOnly{.spin = milliseconds(1), .sleep = milliseconds(300)};  // yields for ever
  const auto t0 = Clock::now();
  yieldOnly.pause(std::chrono::hours(1));
  EXPECT_LT(Clock::now() - t0, milliseconds(300));
}

TEST(IdlePoll, TimesOutOnlyAfterTheTimeoutWithoutProgress) {
  const auto t0 = Clock::now();
  IdlePoll idle(PollBackoff{.spin = std::chrono::microseconds(50)}, milliseconds(50));
  int rounds = 0;
  while (idle.idle()) ++rounds;
  EXPECT_GE(Clock::now() - t0, milliseconds(50));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_GT(rounds, 1);
  EXPECT_FALSE(idle.idle());  // still timed out: nothing moved
}

TEST(IdlePoll, ProgressStartsTheTimeoutOver) {
  const auto t0 = Clock::now();  // each time taken before the progress it measures from
  IdlePoll idle(PollBackoff{.spin = std::chrono::microseconds(50)}, milliseconds(300));
  while (Clock::now() - t0 < milliseconds(200)) ASSERT_TRUE(idle.idle());
  const auto t1 = Clock::now();
  idle.progress();
  while (Clock::now() - t1 < milliseconds(200)) ASSERT_TRUE(idle.idle());  // 400 ms since t0, 200 since progress
  const auto t2 = Clock::now();
  idle.progress();
  while (idle.idle()) {
  }
  EXPECT_GE(Clock::now() - t2, milliseconds(300));
  EXPECT_GE(Clock::now() - t0, milliseconds(700));
}

// A thread that does not run for longer than kStopGap (its process stopped, simulated here by one
// long sleep between two checks) has only kStopGap of that gap counted.
constexpr auto kGap = PauseClock::kStopGap;
constexpr auto kStop = std::chrono::seconds(1);
static_assert(kGap + milliseconds(100) < milliseconds(400) && milliseconds(400) < kStop);

TEST(BoundedPoll, AStopIsNotCountedTowardTheDeadline) {
  const auto t0 = Clock::now();
  const auto deadline = t0 + milliseconds(400);
  int polls = 0;
  const auto r = boundedPoll(
      [&] {
        if (++polls == 1) std::this_thread::sleep_for(kStop);  // stopped for 1 s, past the wall-clock deadline
        return false;
      },
      kNever, deadline, PollBackoff{});
  EXPECT_EQ(r, WaitResult::TimedOut);
  EXPECT_GT(polls, 1);  // not timed out at the first check after the stop
  // The 400 ms of run time end 1 s - kStopGap later than the wall clock says.
  EXPECT_GE(Clock::now() - t0, milliseconds(400) + (kStop - kGap));
}

TEST(IdlePoll, AStopIsNotCountedTowardTheTimeout) {
  const auto t0 = Clock::now();
  IdlePoll idle(PollBackoff{}, milliseconds(400));
  ASSERT_TRUE(idle.idle());
  std::this_thread::sleep_for(kStop);  // stopped: no check for 1 s, past the timeout on the wall clock
  EXPECT_TRUE(idle.idle());            // counted kStopGap only
  while (idle.idle()) {
  }
  EXPECT_GE(Clock::now() - t0, milliseconds(400) + (kStop - kGap));
}

}  // namespace
}  // namespace cclab
