// The -J FILE output of the *_perf tools and peers: the shared results JSON
// (collectives/conventions/results_json.h) plus bench's own keys:
//   "machine":{"hostname","cpu","cpus"}, "date", "command", "settings":{...}, and from the *_perf
//   tools "arrivals":{...} (bench/harness/arrival_report.h)
// The simulator's calibration and plots/bandwidth.py read these keys (docs/bench.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bench/report/machine_info.h"
#include "bench/report/report_types.h"

namespace cclab::bench {

struct RunInfo : conventions::RunDescription {
  MachineInfo machine;
  std::string date;
  std::string command;
  nlohmann::json settings = nlohmann::json::object();  // tool-specific: iters, warmup, slice, straggler, ...
  nlohmann::json arrivals;  // null: no "arrivals" key (peers)
};

nlohmann::json toJson(const RunInfo& info, const ResultLog& log);

// Checks now that `path` can be written (UsageError naming -J otherwise), so that a bad -J fails before
// the run; write() replaces the file whole at the end, so a run that fails leaves the old file as it was.
class JsonReportFile {
 public:
  explicit JsonReportFile(std::string path);
  void write(const RunInfo& info, const ResultLog& log) const;  // throws cclab::Error

 private:
  std::string path_;
};

}  // namespace cclab::bench
