// The harness's command line: the shared flags (bench/report/common_flags.h) plus data type, op and
// root (-d -o -r -t), and the cclab-specific --backend --algo --slice --straggler --timeout --order
// --channels --ranks-per-node.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/report/cli.h"
#include "bench/report/iteration.h"
#include "bench/report/report_types.h"
#include "collectives/communicator.h"

namespace cclab::bench {

struct DataSelection {
  std::string typeSpec = "float";  // -d: a type name or "all"
  std::string opSpec = "sum";      // -o: an op name or "all"
  std::vector<DataType> types{DataType::Float32};
  std::vector<ReduceOp> ops{ReduceOp::Sum};
  int root = 0;  // -r
};

struct CommSelection {
  std::optional<Backend> backend;  // empty: cuda when available, else host
  plan::Algorithm algorithm = plan::Algorithm::Auto;
  std::int64_t sliceBytes = 0;  // 0: the backend's default
  Straggler straggler;
  std::chrono::milliseconds timeout{30000};
  int nranks = 1;
  CudaOrder order = CudaOrder::Events;  // cuda backend only
  int channels = 0;                     // --channels: 0 = the backend's default
  std::optional<int> ranksPerNode;      // --ranks-per-node, else CCLAB_RANKS_PER_NODE, else 0 (one node)
};

struct HarnessOptions {
  SweepOptions sweep;
  IterationOptions iteration;
  DataSelection data;
  CommSelection comm;
  std::string jsonPath;
  int threads = 1;  // -t: host threads driving the ranks; > 1: one rank per thread (per-rank calls)
  bool help = false;
  bool helpEnv = false;  // --help-env: the CCLAB_* knobs (collectives/core/knobs.h)
};

// Registers every flag of a *_perf tool on `cli`, writing into `o`.
void addHarnessFlags(CommandLine& cli, HarnessOptions& o);

// --ranks-per-node absent: takes CCLAB_RANKS_PER_NODE when set (a whole number >= 0, else UsageError),
// else 0 (one node).
void applyEnvironment(HarnessOptions& o);

// -t N > 1 (nccl-tests' -t N -g 1): N ranks, each driven by its own host thread with per-rank calls
// instead of one group call. Needs -g 1 (or no -g); sets comm.nranks = N. Throws UsageError.
void applyThreads(HarnessOptions& o);

// Checks what single flags cannot: sizes, straggler rank, root and an algorithm file's rank count
// against the ranks (-g; under mpirun the processes x -g, so before the start-of-job agreement),
// algorithm against the collective. Throws UsageError.
void validate(const HarnessOptions& o, plan::Collective c);
// Throws UsageError when the straggler or the root is not one of the n ranks (`ranks` names them in
// the message: "-g 4", "the 4 processes").
void checkRanks(const HarnessOptions& o, plan::Collective c, int n, const std::string& ranks);

// "3:delay=500us" (or the old "3:500") -> rank 3 arrives 500 us late; throws UsageError.
Straggler parseBenchStraggler(std::string_view text);

}  // namespace cclab::bench
