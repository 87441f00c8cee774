// The results JSON that bench (*_perf -J, the peers) and cclab-sim (-J) write and plots/ and the
// simulator's calibration read. The shared part of the schema (docs/bench.md):
//   {"collective","backend","algo","nranks","type","op",
//    "results":[{"size","count","type","redop","root",
//                "oop":{"time_us","algbw","busbw","wrong"},"ip":{...}}],
//    "avg_busbw"}
// Each tool adds its own keys beside these (bench: machine, date, command, settings; cclab-sim:
// predicted, model, topology, slice_bytes). busbw is always written: readers never recompute it.
// JSON has no inf or nan: a non-finite number is written as null.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "collectives/conventions/result.h"

namespace cclab::conventions {

struct RunDescription {
  std::string collective;  // "allreduce", "reducescatter", "allgather", "broadcast", "reduce"
  std::string backend;     // "host", "cuda", "nccl", a peer ("mpi", "gloo"), or "sim"
  std::string algo;        // as requested ("ring", "auto"); peers: their algorithm's name
  int nranks = 1;
  std::string type;  // as requested with -d ("float" or "all")
  std::string op;    // as requested with -o ("sum", "all"), or "none"
};

// The shared keys above for one run.
nlohmann::json resultsJson(const RunDescription& run, const ResultLog& log);

// Writes `doc` (indented, one trailing newline) to `path` whole or not at all (writeFileAtomically).
// Check the path with checkWritable(path, "-J") before the run starts.
void writeJsonFile(const std::filesystem::path& path, const nlohmann::json& doc);

}  // namespace cclab::conventions
