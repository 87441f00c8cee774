// Removing what dead processes left in /dev/shm: a creator killed with SIGKILL (or by the OOM killer)
// cannot unlink its segments, so survivors and the next job sweep them by their headers' creator.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cclab::proc {

// The start time of `pid` (/proc/<pid>/stat field 22, clock ticks since boot), or 0 when there is no
// such process or it is a zombie (dead, not yet reaped).
std::uint64_t processStartTime(pid_t pid);

// Whether the process that created a segment still runs: the pid exists, is no zombie and started at
// `startTime` (so a pid the kernel reused for another process counts as dead).
bool creatorAlive(pid_t pid, std::uint64_t startTime);

// Unlinks every "/cclab-<jobPrefix>-..." segment in `dir` (the job id whole) whose creator is dead,
// and those without a complete header (their creator died while making them) once older than
// `headerGrace`. An empty jobPrefix sweeps every cclab segment. Returns how many were removed. Segments of live creators are
// never touched.
std::size_t cleanupStaleSegments(std::string_view jobPrefix, const std::string& dir = "/dev/shm",
                                 std::chrono::seconds headerGrace = std::chrono::seconds(10));

}  // namespace cclab::proc
