// cclab-train's command line (CLI11). Every problem is one InvalidArgument line; main prints it and
// exits 2.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "trainer/data/data_source.h"
#include "trainer/run/train_config.h"

namespace cclab::trainer {

struct OutputOptions {
  std::string jsonPath;           // -J
  std::string tracePath;          // --trace
  std::string weightsPath;        // --save-weights: the final parameters, raw float32 (report/weights_file.h)
  std::string scalingBaseline;    // --scaling-baseline: a -J file of the same run with fewer workers
  std::string stragglerBaseline;  // --straggler-baseline: a -J file of the same run without --straggler
  bool quiet = false;             // no per-epoch progress on stderr
};

struct CliOptions {
  TrainConfig train;
  DataSource data;
  OutputOptions output;
  std::string commandLine;
  bool backendGiven = false;  // --backend on the command line (else proc under mpirun, host otherwise)
  bool workersGiven = false;  // --workers on the command line (else, under mpirun, one per process)
};

// Returns nullopt after printing --help to `help`. Throws InvalidArgument.
std::optional<CliOptions> parseCommandLine(int argc, const char* const* argv, std::ostream& help);

// Throws InvalidArgument unless every output file (-J, --trace, --save-weights) can be written, and
// no two name one file (conventions::checkDistinctOutputs: paths, symlinks, hard links).
// Call before the run: a run must not train for minutes and then fail to save its results.
void checkOutputs(const OutputOptions& o);

}  // namespace cclab::trainer
