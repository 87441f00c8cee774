// Shared segments: names, create/attach across processes, the refusals, and that the creator (only
// the creator) unlinks on a normal end and on an exception.
#include "collectives/proc/shm_segment.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <stdexcept>

#include "collectives/core/errors.h"
#include "tests/proc/child_process.h"

namespace cclab::proc {
namespace {

using testing::exitedWith;
using testing::forkChild;
using testing::waitChild;

bool exists(const std::string& name) {
  struct stat st {};
  return stat(segmentPath(name).c_str(), &st) == 0;
}

TEST(ProcSegmentName, FollowsTheScheme) {
  EXPECT_EQ(segmentName("ab12", 3, "buf"), "/cclab-ab12-3-buf");
  EXPECT_EQ(segmentPath("/cclab-ab12-3-buf"), "/dev/shm/cclab-ab12-3-buf");
  EXPECT_THROW(segmentName("a-b", 0, "buf"), InvalidArgument);  // '-' separates the fields
  EXPECT_THROW(segmentName("", 0, "buf"), InvalidArgument);
  EXPECT_THROW(segmentName("job", -1, "buf"), InvalidArgument);
  EXPECT_THROW(segmentName("job", 0, "b/f"), InvalidArgument);
}

TEST(ProcSegmentName, JobIdsAreUniqueTokens) {
  const std::string a = makeJobId(), b = makeJobId();
  EXPECT_NE(a, b);
  EXPECT_NO_THROW(segmentName(a, 0, "x"));
}

TEST(ProcSegment, ChildAttachesAndSharesBytes) {
  const std::string name = segmentName(makeJobId(), 0, "buf");
  constexpr std::size_t kBytes = 1000003;  // odd, spans pages
  {
    ShmSegment seg = ShmSegment::create(name, kBytes);
    ASSERT_TRUE(exists(name));
    EXPECT_EQ(seg.size(), kBytes);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(seg.data()) % 4096, 0U);
    for (std::size_t i = 0; i < kBytes; ++i) ASSERT_EQ(seg.data()[i], std::byte{0});
    const pid_t parent = getpid();
    const pid_t child = forkChild([&] {
      ShmSegment peer = ShmSegment::attach(name, std::chrono::seconds(5));
      if (peer.owner() || peer.size() != kBytes || peer.creatorPid() != parent) return 4;
      for (std::size_t i = 0; i < kBytes; ++i) peer.data()[i] = static_cast<std::byte>(i * 7 + 1);
      return 0;
    });
    ASSERT_TRUE(exitedWith(waitChild(child), 0));
    for (std::size_t i = 0; i < kBytes; ++i) ASSERT_EQ(seg.data()[i], static_cast<std::byte>(i * 7 + 1)) << i;
    EXPECT_TRUE(exists(name));  // the attacher's end removes nothing
  }
  EXPECT_FALSE(exists(name));
}

TEST(ProcSegment, AChildsCopyOfTheOwnerUnlinksNothing) {
  const std::string name = segmentName(makeJobId(), 0, "buf");
  ShmSegment seg = ShmSegment::create(name, 64);
  const pid_t child = forkChild([&] {
    seg.close();  // the inherited object: its owner is the parent
    return 0;
  });
  ASSERT_TRUE(exitedWith(waitChild(child), 0));
  EXPECT_TRUE(exists(name));
  seg.close();
  EXPECT_FALSE(exists(name));
}

TEST(ProcSegment, AnExceptionUnwindsAndUnlinks) {
  const std::string name = segmentName(makeJobId(), 1, "buf");
  try {
    ShmSegment seg = ShmSegment::create(name, 4096);
    ASSERT_TRUE(exists(name));
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(exists(name));
}

TEST(ProcSegment, MovingKeepsOneOwner) {
  const std::string name = segmentName(makeJobId(), 0, "buf");
  ShmSegment a = ShmSegment::create(name, 64);
  ShmSegment b = std::move(a);
  a.close();  // moved-from: nothing to do
  EXPECT_TRUE(exists(name));
  EXPECT_TRUE(b.owner());
  b = ShmSegment();
  EXPECT_FALSE(exists(name));
}

TEST(ProcSegment, RefusesDuplicatesRunawaysAndBadNames) {
  const std::string name = segmentName(makeJobId(), 0, "buf");
  ShmSegment seg = ShmSegment::create(name, 64);
  EXPECT_THROW(ShmSegment::create(name, 64), InvalidArgument);
  EXPECT_TRUE(exists(name));  // the refused duplicate did not remove the first
  const std::string big = segmentName(makeJobId(), 0, "big");
  try {
    ShmSegment::create(big, std::size_t{1} << 50);  // 1 PiB
    FAIL() << "a 1 PiB segment was created";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/shm has"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(exists(big));
  EXPECT_THROW(ShmSegment::create("no-slash", 64), InvalidArgument);
  EXPECT_THROW(ShmSegment::create("/a/b", 64), InvalidArgument);
}

TEST(ProcSegment, AttachingToAMissingSegmentTimesOutNamingIt) {
  const std::string name = segmentName(makeJobId(), 5, "ctrl");
  const auto start = std::chrono::steady_clock::now();
  try {
    ShmSegment::attach(name, std::chrono::milliseconds(100));
    FAIL() << "attached to a segment nobody made";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(100));
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(ProcSegment, AttachWaitsForALateCreator) {
  const std::string name = segmentName(makeJobId(), 0, "late");
  testing::ReadyPipe done;
  const pid_t child = forkChild([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ShmSegment seg = ShmSegment::create(name, 8);
    seg.data()[0] = std::byte{42};
    (void)done.wait(std::chrono::seconds(20));  // keep it until the parent has looked
    return 0;
  });
  {
    ShmSegment peer = ShmSegment::attach(name, std::chrono::seconds(10));
    EXPECT_EQ(peer.data()[0], std::byte{42});
    EXPECT_EQ(peer.creatorPid(), child);
    done.signal();
  }
  ASSERT_TRUE(exitedWith(waitChild(child), 0));
  EXPECT_FALSE(exists(name));
}

}  // namespace
}  // namespace cclab::proc
