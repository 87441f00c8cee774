// The -J FILE output: one JSON object per run. Schema (docs/bench.md; the simulator's calibration and
// plots/bandwidth.py read these keys):
//   {"collective","backend","algo","nranks","type","op","machine":{"hostname","cpu","cpus"},"date",
//    "command","settings":{...},"results":[{"size","count","type","redop","root",
//    "oop":{"time_us","algbw","busbw","wrong"},"ip":{...}}],"avg_busbw"}
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bench/report/machine_info.h"
#include "bench/report/result.h"

namespace cclab::bench {

struct RunInfo {
  std::string collective;  // "allreduce", "reducescatter", "allgather", "broadcast", "reduce"
  std::string backend;     // "host", "cuda", "nccl", or a peer: "mpi", "gloo"
  std::string algo;        // as requested: "ring", "auto", ...; peers: their algorithm's name
  int nranks = 1;
  std::string type;  // as requested with -d ("float" or "all")
  std::string op;    // as requested with -o ("sum", "all", or "none")
  MachineInfo machine;
  std::string date;
  std::string command;
  nlohmann::json settings = nlohmann::json::object();  // tool-specific: iters, warmup, slice, straggler, ...
};

nlohmann::json toJson(const RunInfo& info, const ResultLog& log);

// Opens (truncates) `path` now, so that an unwritable -J fails before the run (UsageError), and writes
// the report at the end.
class JsonReportFile {
 public:
  explicit JsonReportFile(std::string path);
  void write(const RunInfo& info, const ResultLog& log) const;  // throws cclab::Error-like std::runtime_error

 private:
  std::string path_;
};

}  // namespace cclab::bench
