#include "trainer/metrics/trace.h"

#include "collectives/conventions/output_file.h"
#include "nlohmann/json.hpp"
#include "trainer/run/clock.h"

namespace cclab::trainer {

void writeChromeTrace(const std::filesystem::path& path, std::span<const TraceEvent> events, int workers) {
  nlohmann::json list = nlohmann::json::array();
  for (int r = 0; r < workers; ++r) {
    list.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", computeTrack(r)},
                    {"args", {{"name", "worker " + std::to_string(r)}}}});
    list.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", commTrack(r)},
                    {"args", {{"name", "comm " + std::to_string(r)}}}});
  }
  for (const TraceEvent& e : events)
    list.push_back({{"name", e.name}, {"ph", "X"}, {"pid", 0}, {"tid", e.track},
                    {"ts", static_cast<double>(e.startNs) / kNsPerUs}, {"dur", static_cast<double>(e.durNs) / kNsPerUs},
                    {"args", {{"step", e.step}}}});
  conventions::writeFileAtomically(path, nlohmann::json{{"traceEvents", list}, {"displayTimeUnit", "ms"}}.dump() + '\n');
}

}  // namespace cclab::trainer
