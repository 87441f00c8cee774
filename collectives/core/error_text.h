// The words of one-line errors that name ranks and durations (TimeoutError lines above all), written
// once for every executor that throws them: "rank 2", "ranks 1, 3" (at most kNamedRanks named, then
// "and N more", so a message stays one readable line) and "30000 ms"; and what a path that is not a
// regular file is, in the words of both the input opener and the output writer.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstddef>
#include <span>
#include <string>

namespace cclab {

inline constexpr std::size_t kNamedRanks = 8;

// "rank 2", "ranks 1, 3", "ranks 0, 1, 2, 3, 4, 5, 6, 7 and 5 more": the ranks in the given order.
inline std::string namedRanks(std::span<const int> ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size() && i < kNamedRanks; ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > kNamedRanks) text += " and " + std::to_string(ranks.size() - kNamedRanks) + " more";
  return text;
}

// "30000 ms": a duration in whole milliseconds (truncated).
inline std::string millisecondsText(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

// "is a directory", "is a FIFO, not a regular file", ...: what a file of this st_mode is, for a tool
// that reads or writes regular files only.
inline std::string fileKindText(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISCHR(mode)) return "is a character device, not a regular file";
  if (S_ISBLK(mode)) return "is a block device, not a regular file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

}  // namespace cclab
