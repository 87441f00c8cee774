// Cleanup on every exit path of a creator process: SIGTERM and SIGINT (its handler unlinks, then the
// process still dies by the signal), an uncaught exception (abort), std::exit, and SIGKILL (nothing runs
// in the child; the parent's stale sweep removes it, and leaves live creators' segments alone).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/proc/cleanup_registry.h"
#include "collectives/proc/shm_segment.h"
#include "collectives/proc/stale_sweep.h"
#include "tests/proc/child_process.h"

namespace cclab::proc {
namespace {

using testing::exitedWith;
using testing::forkChild;
using testing::killedBy;
using testing::ReadyPipe;
using testing::waitChild;

bool exists(const std::string& name) {
  struct stat st {};
  return stat(segmentPath(name).c_str(), &st) == 0;
}

// A child that creates two segments of `job`, says ready and then idles (bounded) until killed.
pid_t idleCreator(const std::string& job, const ReadyPipe& ready) {
  return forkChild([&] {
    ShmSegment a = ShmSegment::create(segmentName(job, 0, "buf"), 4096);
    ShmSegment b = ShmSegment::create(segmentName(job, 0, "ctrl"), 64);
    ready.signal();
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return 5;
  });
}

class ProcCleanupOnSignal : public ::testing::TestWithParam<int> {};

TEST_P(ProcCleanupOnSignal, TheChildsHandlerUnlinksAndTheSignalStillKills) {
  const std::string job = makeJobId();
  ReadyPipe ready;
  const pid_t child = idleCreator(job, ready);
  ASSERT_TRUE(ready.wait());
  ASSERT_TRUE(exists(segmentName(job, 0, "buf")));
  kill(child, GetParam());
  EXPECT_TRUE(killedBy(waitChild(child), GetParam()));
  EXPECT_FALSE(exists(segmentName(job, 0, "buf")));
  EXPECT_FALSE(exists(segmentName(job, 0, "ctrl")));
}

INSTANTIATE_TEST_SUITE_P(Signals, ProcCleanupOnSignal, ::testing::Values(SIGTERM, SIGINT, SIGHUP));

TEST(ProcCleanup, AKilledCreatorsSegmentsAreSweptByTheParent) {
  const std::string job = makeJobId();
  ReadyPipe ready;
  const pid_t child = idleCreator(job, ready);
  ASSERT_TRUE(ready.wait());
  EXPECT_EQ(cleanupStaleSegments(job), 0U);  // its creator lives: nothing to sweep
  EXPECT_TRUE(exists(segmentName(job, 0, "buf")));
  kill(child, SIGKILL);
  EXPECT_TRUE(killedBy(waitChild(child), SIGKILL));
  EXPECT_TRUE(exists(segmentName(job, 0, "buf")));  // SIGKILL runs no handler
  EXPECT_EQ(cleanupStaleSegments(job), 2U);
  EXPECT_FALSE(exists(segmentName(job, 0, "buf")));
  EXPECT_FALSE(exists(segmentName(job, 0, "ctrl")));
}

TEST(ProcCleanup, TheSweepLeavesOtherJobsAndLiveCreatorsAlone) {
  const std::string mine = makeJobId(), other = makeJobId();
  ShmSegment live = ShmSegment::create(segmentName(mine, 0, "buf"), 64);
  ReadyPipe ready;
  const pid_t child = idleCreator(other, ready);
  ASSERT_TRUE(ready.wait());
  kill(child, SIGKILL);
  waitChild(child);
  EXPECT_EQ(cleanupStaleSegments(mine), 0U);  // my live segment stays, the other job is not mine
  EXPECT_TRUE(exists(live.name()));
  EXPECT_TRUE(exists(segmentName(other, 0, "buf")));
  EXPECT_EQ(cleanupStaleSegments(other), 2U);
}

TEST(ProcCleanup, TheSweepTakesTheJobIdWhole) {
  const std::string job = makeJobId();
  ReadyPipe ready;
  const pid_t child = idleCreator(job + "1", ready);  // a job whose id starts with this one's
  ASSERT_TRUE(ready.wait());
  kill(child, SIGKILL);
  waitChild(child);
  EXPECT_EQ(cleanupStaleSegments(job), 0U);
  EXPECT_TRUE(exists(segmentName(job + "1", 0, "buf")));
  EXPECT_EQ(cleanupStaleSegments(job + "1"), 2U);
}

TEST(ProcCleanup, AHeaderlessSegmentIsSweptOnlyAfterTheGrace) {
  const std::string job = makeJobId();
  const std::string name = segmentName(job, 0, "buf");
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);  // a creator that died at once
  ASSERT_GE(fd, 0);
  close(fd);
  EXPECT_EQ(cleanupStaleSegments(job, "/dev/shm", std::chrono::seconds(3600)), 0U);
  EXPECT_TRUE(exists(name));
  EXPECT_EQ(cleanupStaleSegments(job, "/dev/shm", std::chrono::seconds(0)), 1U);
  EXPECT_FALSE(exists(name));
}

TEST(ProcCleanup, AnUncaughtExceptionInTheChildLeavesNothing) {
  const std::string job = makeJobId();
  const pid_t child = fork();
  if (child == 0) {
    ShmSegment seg = ShmSegment::create(segmentName(job, 0, "buf"), 64);
    // Thrown on a thread of its own: gtest's catch around the test body cannot see it, so it is
    // really uncaught (std::terminate, then abort).
    std::thread([] { throw std::runtime_error("uncaught in the child"); }).join();
    _exit(0);
  }
  EXPECT_TRUE(killedBy(waitChild(child), SIGABRT));
  EXPECT_FALSE(exists(segmentName(job, 0, "buf")));
}

TEST(ProcCleanup, StdExitLeavesNothing) {
  const std::string job = makeJobId();
  const pid_t child = fork();
  if (child == 0) {
    auto* leaked = new ShmSegment(ShmSegment::create(segmentName(job, 0, "buf"), 64));  // never destroyed
    (void)leaked;
    std::exit(0);  // atexit hook
  }
  EXPECT_TRUE(exitedWith(waitChild(child), 0));
  EXPECT_FALSE(exists(segmentName(job, 0, "buf")));
}

TEST(ProcCleanup, AFullRegistryRefusesTheSegmentAndLeavesNoFile) {
  const std::string job = makeJobId();
  const int before = registeredForCleanup();
  std::vector<ShmSegment> held;
  std::string refused;
  for (int i = 0; i <= kCleanupSlots && refused.empty(); ++i) {
    const std::string name = segmentName(job, i, "buf");
    try {
      held.push_back(ShmSegment::create(name, 0));
    } catch (const Error&) {
      refused = name;
    }
  }
  ASSERT_FALSE(refused.empty()) << "more than " << kCleanupSlots << " segments were registered";
  EXPECT_FALSE(exists(refused));  // unregistered files would outlive a signal: none is left
  held.clear();
  EXPECT_EQ(cleanupStaleSegments(job), 0U);
  EXPECT_EQ(registeredForCleanup(), before);
}

TEST(ProcCleanup, TheRegistryCountsOnlyThisProcessesLiveSegments) {
  const int before = registeredForCleanup();
  {
    ShmSegment a = ShmSegment::create(segmentName(makeJobId(), 0, "buf"), 64);
    EXPECT_EQ(registeredForCleanup(), before + 1);
    const pid_t child = forkChild([] { return registeredForCleanup() == 0 ? 0 : 4; });
    EXPECT_TRUE(exitedWith(waitChild(child), 0));
  }
  EXPECT_EQ(registeredForCleanup(), before);
}

}  // namespace
}  // namespace cclab::proc
