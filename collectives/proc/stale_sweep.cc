// The stale-segment sweep: read each cclab segment's header, unlink it when its creator is gone.
#include "collectives/proc/stale_sweep.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

#include "collectives/proc/shm_segment.h"

namespace cclab::proc {

std::uint64_t processStartTime(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return 0;
  // "pid (comm) state f4 ... f22": comm may hold spaces and ')', so parse after the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 1));
  std::string field;
  std::uint64_t start = 0;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 3 && (field == "Z" || field == "X")) return 0;
    if (i == 22) start = std::strtoull(field.c_str(), nullptr, 10);
  }
  return start;
}

bool creatorAlive(pid_t pid, std::uint64_t startTime) {
  if (pid <= 0) return false;
  const std::uint64_t now = processStartTime(pid);
  return now != 0 && (startTime == 0 || now == startTime);
}

namespace {

enum class Verdict { Live, Dead, Unknown };

// Reads the header of /dev/shm file `path`: Dead when its creator is gone, Unknown without a header.
Verdict judge(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Verdict::Live;  // gone or unreadable: leave it
  struct stat st {};
  Verdict v = Verdict::Unknown;
  if (fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) >= sizeof(SegmentHeader)) {
    void* p = mmap(nullptr, sizeof(SegmentHeader), PROT_READ, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) {
      const auto* h = static_cast<const SegmentHeader*>(p);
      if (h->magic.load(std::memory_order_acquire) == kSegmentMagic)
        v = creatorAlive(h->creatorPid, h->creatorStartTime) ? Verdict::Live : Verdict::Dead;
      munmap(p, sizeof(SegmentHeader));
    }
  }
  close(fd);
  return v;
}

bool olderThan(const std::string& path, std::chrono::seconds age) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return false;
  return std::time(nullptr) - st.st_mtime >= age.count();
}

}  // namespace

std::size_t cleanupStaleSegments(std::string_view jobPrefix, const std::string& dir, std::chrono::seconds headerGrace) {
  // A whole job id ends at the '-' before the rank: job "ab" must not sweep job "abc"'s segments.
  const std::string prefix = "cclab-" + std::string(jobPrefix) + (jobPrefix.empty() ? "" : "-");
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string_view n(e->d_name);
      if (n.substr(0, prefix.size()) == prefix) names.emplace_back(n);
    }
    closedir(d);
  }
  std::size_t removed = 0;
  for (const std::string& n : names) {
    const std::string path = dir + "/" + n;
    const Verdict v = judge(path);
    if (v == Verdict::Dead || (v == Verdict::Unknown && olderThan(path, headerGrace)))
      if (unlink(path.c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace cclab::proc
