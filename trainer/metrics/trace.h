// Chrome-trace timeline (chrome://tracing, Perfetto): complete events ("ph":"X") per thread.
// Worker r's compute runs on track 2r, its communication thread on track 2r + 1.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace cclab::trainer {

struct TraceEvent {
  const char* name = "";  // a string literal
  int track = 0;
  std::int64_t startNs = 0;
  std::int64_t durNs = 0;
  std::int64_t step = 0;
};

inline int computeTrack(int rank) { return 2 * rank; }
inline int commTrack(int rank) { return 2 * rank + 1; }

// Per-thread event list; disabled logs drop everything.
class TraceLog {
 public:
  explicit TraceLog(bool enabled = false) : enabled_(enabled) {}
  void add(const char* name, int track, std::int64_t startNs, std::int64_t endNs, std::int64_t step) {
    if (enabled_) events_.push_back({name, track, startNs, endNs - startNs, step});
  }
  [[nodiscard]] bool enabled() const { return enabled_; }
  [[nodiscard]] std::vector<TraceEvent>& events() { return events_; }

 private:
  bool enabled_;
  std::vector<TraceEvent> events_;
};

// Writes {"traceEvents": [...]} with thread names "worker r" / "comm r"; throws Error if it cannot.
// Written whole through a temporary file (conventions/output_file.h); throws Error.
void writeChromeTrace(const std::filesystem::path& path, std::span<const TraceEvent> events, int workers);

}  // namespace cclab::trainer
