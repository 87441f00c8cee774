// A wait whose process is stopped (SIGSTOP) for longer than its timeout and then resumed does not time
// out on resume: deadlines count only the time the waiting thread ran (collectives/core/pause_clock.h).
// A child process waits with a 1 s timeout on a word in shared memory; the parent stops it for 2 s,
// resumes it, and only then writes the word. The same for the process backend's wait (shared futex)
// and the thread backend's (collectives/host/wait.h; the child re-checks the word between sleeps).
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <new>
#include <thread>

#include "collectives/host/wait.h"
#include "collectives/proc/shared_wait.h"
#include "collectives/proc/shm_segment.h"
#include "tests/proc/child_process.h"

namespace cclab::proc {
namespace {

using testing::exitedWith;
using testing::forkChild;
using testing::waitChild;

struct Words {
  SharedWord started, ping, abort;
  host::WaitWord hostPing;
  std::atomic<bool> hostAbort{false};
};

constexpr auto kTimeout = std::chrono::seconds(1);
constexpr auto kStopped = std::chrono::seconds(2);  // twice the timeout
constexpr int kReady = 0, kTimedOut = 5, kAborted = 6;

class PausedWait : public ::testing::TestWithParam<bool> {};  // true: host::waitUntil, false: proc::waitUntil

TEST_P(PausedWait, AWaitStoppedLongerThanItsTimeoutEndsReadyOnceResumed) {
  const bool hostWait = GetParam();
  ShmSegment seg = ShmSegment::create(segmentName(makeJobId(), 0, "ctrl"), sizeof(Words));
  Words* w = new (seg.data()) Words{};
  const pid_t child = forkChild([&] {
    const auto ready = [](std::uint32_t v) { return v >= 1; };
    const auto deadline = Clock::now() + kTimeout;
    w->started.store(1);
    if (hostWait) {
      const auto r = host::waitUntil(w->hostPing, ready, w->hostAbort, deadline, std::chrono::nanoseconds(0));
      return r == host::WaitResult::Ready ? kReady : r == host::WaitResult::TimedOut ? kTimedOut : kAborted;
    }
    const auto r = waitUntil(w->ping, ready, w->abort, deadline, std::chrono::nanoseconds(0));
    return r == WaitResult::Ready ? kReady : r == WaitResult::TimedOut ? kTimedOut : kAborted;
  });
  waitAtLeast(w->started, 1, w->abort, std::chrono::seconds(20), std::chrono::nanoseconds(0), "the child's start");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // asleep in its wait
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status));
  std::this_thread::sleep_for(kStopped);
  ASSERT_EQ(kill(child, SIGCONT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // resumed, and past its wall-clock deadline
  w->hostPing.store(1);
  w->ping.store(1);
  const int end = waitChild(child);
  EXPECT_TRUE(exitedWith(end, kReady)) << "the child's wait ended with exit status " << (WIFEXITED(end) ? WEXITSTATUS(end) : -1)
                                       << " (" << kTimedOut << ": timed out on resume)";
}

INSTANTIATE_TEST_SUITE_P(HostOrProc, PausedWait, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "HostWait" : "ProcWait"; });

}  // namespace
}  // namespace cclab::proc
