// POSIX shared-memory segments for ranks that are processes: one process creates a segment
// (shm_open + ftruncate + mmap) and owns it, the others attach to it by name. The creator unlinks it
// when its ShmSegment is destroyed (normal end or an exception), when it is stopped by a catchable
// signal (cleanup_registry.h) or, when it was killed, the next cleanupStaleSegments (stale_sweep.h).
// Users that know when every peer has attached remove the name then (unlinkName), as ShmExecutor does.
//
// Names: "/cclab-<job>-<rank>-<purpose>", where <job> is an id unique to one job (makeJobId) and
// <purpose> says what the segment holds ("buf", "ctrl"). Every segment starts with a SegmentHeader
// (its creator's pid and process start time, which the stale sweep reads); the payload starts at
// kPayloadOffset, page-aligned.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cclab::proc {

inline constexpr std::uint64_t kSegmentMagic = 0x63636c6162736567ULL;  // "cclabseg"
inline constexpr std::size_t kPayloadOffset = 4096;

struct SegmentHeader {
  std::atomic<std::uint64_t> magic;  // kSegmentMagic once the creator has filled the rest
  std::int32_t creatorPid;
  std::uint32_t version;
  std::uint64_t creatorStartTime;    // /proc/<pid>/stat field 22: tells a reused pid apart
  std::uint64_t payloadBytes;
};
static_assert(sizeof(SegmentHeader) <= kPayloadOffset);

// A job id of 21 lowercase hex digits, unique per call on this machine: pid (8), a steady-clock
// reading (10), a counter (3); fixed widths, so no id is a prefix of another.
std::string makeJobId();

// "/cclab-<job>-<rank>-<purpose>". Throws InvalidArgument when job or purpose is empty, holds anything
// but letters, digits and '_', or when rank < 0.
std::string segmentName(std::string_view job, int rank, std::string_view purpose);

// The file behind a segment name on Linux: "/dev/shm/<name without its slash>".
std::string segmentPath(std::string_view name);

class ShmSegment {
 public:
  using Clock = std::chrono::steady_clock;

  // Creates `name` with `payloadBytes` usable bytes (zero-filled). Throws InvalidArgument when the
  // name is bad, the segment already exists, or /dev/shm has not that much room (a shared segment is
  // allocated on touch, so a runaway would otherwise end in SIGBUS); Error for other system failures.
  static ShmSegment create(const std::string& name, std::size_t payloadBytes);

  // Attaches to `name`, waiting until its creator has made it and filled its header, at most
  // `timeout`; throws TimeoutError naming the segment when it does not appear in time.
  static ShmSegment attach(const std::string& name, std::chrono::nanoseconds timeout);

  ShmSegment() = default;
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  [[nodiscard]] std::byte* data() const { return base_ == nullptr ? nullptr : base_ + kPayloadOffset; }
  [[nodiscard]] std::size_t size() const { return payloadBytes_; }
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] bool owner() const { return owner_; }
  [[nodiscard]] pid_t creatorPid() const;

  // Unmaps now and, for the creator, unlinks. Idempotent.
  void close() noexcept;

  // For the creator: removes the name now and keeps the mapping (every process that attached keeps
  // its mapping too), so nothing is left in /dev/shm however the processes end later, SIGKILL
  // included. Call it once every peer has attached: no one can attach afterwards. Idempotent; does
  // nothing in a process that is not the creator.
  void unlinkName() noexcept;

 private:
  std::byte* base_ = nullptr;
  std::size_t mappedBytes_ = 0;
  std::size_t payloadBytes_ = 0;
  std::string name_;
  bool owner_ = false;
  pid_t ownerPid_ = 0;  // a forked child's copy of an owner object unlinks nothing
};

}  // namespace cclab::proc
