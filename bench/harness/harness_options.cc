// The *_perf tools' flags (harness_options.h) and the checks across flags.
#include "bench/harness/harness_options.h"

#include <cstdlib>

#include "bench/report/collective_shape.h"
#include "bench/report/common_flags.h"
#include "bench/report/usage_error.h"
#include "bench/report/value_parse.h"
#include "collectives/call/checks.h"
#include "collectives/core/errors.h"
#include "collectives/core/knobs.h"
#include "collectives/job.h"
#include "collectives/plan/algorithm_file.h"

namespace cclab::bench {
namespace {

// A day: any longer "delay" or "timeout" is a typo.
constexpr std::int64_t kMaxTimeoutMs = std::int64_t{86400} * 1000;

// -d / -o: one name, or "all" for every value of `all`; `spec` keeps the text for the header and JSON.
template <typename T, std::size_t N>
void setSelection(std::string& spec, std::vector<T>& list, std::string_view v, const T (&all)[N],
                  T (*parse)(std::string_view)) {
  spec = std::string(v);
  list.clear();
  if (v == "all")
    list.assign(std::begin(all), std::end(all));
  else
    list.push_back(parse(v));
}

}  // namespace

Straggler parseBenchStraggler(std::string_view text) {
  try {
    Straggler s = parseStraggler(text, BareNumber::DelayMicroseconds);  // RANK:DELAY_US stays accepted
    if (s.computeFactor != 1.0 || s.linkFactor != 1.0)
      throw UsageError("--straggler '" + std::string(text) + "': the benchmarks inject only delay= (a late start)");
    return s;
  } catch (const InvalidArgument& e) {
    throw UsageError(e.what());
  }
}

void addHarnessFlags(CommandLine& cli, HarnessOptions& o) {
  addSweepFlags(cli, o.sweep);
  addIterationFlags(cli, o.iteration);
  addRanksFlag(cli, o.comm.nranks);
  cli.addOption('t', "nthreads", "N",
                "host threads driving the ranks: 1 = one thread drives all with a group call (default); N > 1 = "
                "N ranks, one thread each making per-rank calls (host backend; give -g 1 or no -g)",
                [&o](std::string_view v) { o.threads = static_cast<int>(parseInteger(v, 1, kMaxRanks, "threads")); });
  cli.addOption('d', "datatype", "TYPE", "float double half bfloat16 int32 int8 uint8, or all (default float)",
                [&o](std::string_view v) {
                  setSelection(o.data.typeSpec, o.data.types, v, kAllDataTypes, parseDataType);
                });
  cli.addOption('o', "op", "OP", "sum prod min max avg, or all (default sum)", [&o](std::string_view v) {
    setSelection(o.data.opSpec, o.data.ops, v, kAllReduceOps, parseReduceOp);
  });
  cli.addOption('r', "root", "RANK", "root of broadcast and reduce (default 0)",
                [&o](std::string_view v) { o.data.root = static_cast<int>(parseInteger(v, 0, kMaxRanks - 1, "root")); });
  addJsonFlag(cli, o.jsonPath);
  cli.addOption('\0', "backend", "NAME", "host, cuda or nccl (default: cuda when a GPU is there, else host)",
                [&o](std::string_view v) { o.comm.backend = parseBackend(v); });
  cli.addOption('\0', "algo", "NAME", "ring tree flat-tree dbtree rhd rd chain hier oneshot twoshot auto (default auto)",
                [&o](std::string_view v) { o.comm.algorithm = plan::parseAlgorithm(v); });
  cli.addOption('\0', "channels", "N", "channels (independent lanes) per collective, 1..64 (default: the backend's)",
                [&o](std::string_view v) {
                  o.comm.channels = static_cast<int>(parseInteger(v, 1, plan::kMaxChannels, "channels"));
                });
  cli.addOption('\0', "ranks-per-node", "G",
                "consecutive ranks per (emulated) node, 0 = one node (default: CCLAB_RANKS_PER_NODE, else 0)",
                [&o](std::string_view v) {
                  o.comm.ranksPerNode = static_cast<int>(parseInteger(v, 0, kMaxRanks, "ranks per node"));
                });
  cli.addOption('\0', "slice", "SIZE", "pipeline slice in bytes, K/M/G suffix (default: the backend's)",
                [&o](std::string_view v) { o.comm.sliceBytes = parseSizeFlag(v, "--slice"); });
  cli.addOption('\0', "straggler", "RANK:delay=T", "this rank arrives T late at every collective (100us, 2ms; RANK:DELAY_US also)",
                [&o](std::string_view v) { o.comm.straggler = parseBenchStraggler(v); });
  cli.addOption('\0', "timeout", "MS", "bound on every wait inside a collective (default 30000)", [&o](std::string_view v) {
    o.comm.timeout = std::chrono::milliseconds(parseInteger(v, 1, kMaxTimeoutMs, "timeout (ms)"));
  });
  cli.addOption('\0', "order", "MODE", "cuda backend: events, graph or ll (default events)", [&o](std::string_view v) {
    try {
      o.comm.order = parseCudaOrder(v);
    } catch (const InvalidArgument& e) {
      throw UsageError(e.what());
    }
  });
  // nccl-tests' -G N replays N iterations from a captured CUDA graph; ours captures each collective
  // once and replays it, so any N > 0 selects the graph ordering.
  cli.addOption('G', "cudagraph", "N", "cuda backend: N > 0 replays a captured CUDA graph (= --order graph)",
                [&o](std::string_view v) {
                  if (parseInteger(v, 0, 1 << 20, "cudagraph") > 0) o.comm.order = CudaOrder::Graph;
                });
  cli.addSwitch('h', "help", "print this help", [&o] { o.help = true; });
  cli.addSwitch('\0', "help-env", "print the CCLAB_* environment knobs", [&o] { o.helpEnv = true; });
}

void checkRanks(const HarnessOptions& o, plan::Collective c, int n, const std::string& ranks) {
  if (o.comm.straggler.rank >= n)
    throw UsageError("--straggler rank " + std::to_string(o.comm.straggler.rank) + " is not a rank of " + ranks);
  if (plan::isRooted(c) && o.data.root >= n)
    throw UsageError("-r root " + std::to_string(o.data.root) + " is not a rank of " + ranks);
}

void applyThreads(HarnessOptions& o) {
  if (o.threads == 1) return;
  if (o.comm.nranks != 1)
    throw UsageError("-t " + std::to_string(o.threads) + " drives one rank per thread (nccl-tests' -t N -g 1): give -g 1 or no -g");
  if (o.comm.backend && *o.comm.backend != Backend::Host)
    throw UsageError("-t > 1 is for the host backend (threads making per-rank calls)");
  o.comm.nranks = o.threads;
}

void applyEnvironment(HarnessOptions& o) {
  if (o.comm.ranksPerNode) return;
  static_assert(knobs::knob(knobs::Id::RanksPerNode).max == kMaxRanks, "CCLAB_RANKS_PER_NODE's range is -g's");
  try {
    o.comm.ranksPerNode = static_cast<int>(knobs::integer(knobs::Id::RanksPerNode).value_or(0));
  } catch (const InvalidArgument& e) {
    throw UsageError(e.what());
  }
}

void validate(const HarnessOptions& o, plan::Collective c) {
  validate(o.sweep);
  // Under mpirun the ranks are the job's processes times -g (the process backend and --backend cuda
  // there; backendAvailable(Proc) means "launched by mpirun"). MPI_Init has run (startJob), so the count
  // is known here, before the start-of-job agreement: a refusal below is one line from rank 0 and exit
  // 2 on every rank, as every other usage error, instead of one line per rank after the table header.
  const bool underMpi = backendAvailable(Backend::Proc);
  const bool processes = o.comm.backend ? *o.comm.backend == Backend::Proc || (*o.comm.backend == Backend::Cuda && underMpi) : underMpi;
  const int n = processes ? jobProcessCount() * o.comm.nranks : o.comm.nranks;
  const std::string ranks = !processes             ? "-g " + std::to_string(n)
                            : o.comm.nranks == 1 ? "the " + std::to_string(n) + " processes"
                                                 : "the " + std::to_string(n) + " ranks (" + std::to_string(jobProcessCount()) +
                                                       " processes x -g " + std::to_string(o.comm.nranks) + ")";
  checkRanks(o, c, n, ranks);
  if (o.comm.algorithm != plan::Algorithm::Auto && !plan::hasGenerator(c, o.comm.algorithm))
    throw UsageError("--algo " + std::string(plan::name(o.comm.algorithm)) + " is not available for " +
                     std::string(plan::name(c)));
  if (plan::isFileAlgorithm(o.comm.algorithm) && plan::algorithmFileOf(o.comm.algorithm).unit.nranks != n)
    throw UsageError("--algo " + std::string(plan::name(o.comm.algorithm)) + " is written for " +
                     std::to_string(plan::algorithmFileOf(o.comm.algorithm).unit.nranks) + " ranks, not " + ranks);
  const int g = o.comm.ranksPerNode.value_or(0);
  if (!processes && o.comm.algorithm == plan::Algorithm::Hierarchical && g > 0 && n % g != 0)
    throw UsageError("--algo hier needs --ranks-per-node (" + std::to_string(g) + ") to divide -g " + std::to_string(n));
  // --slice against the largest size, before anything runs (the Communicator refuses it per call too).
  if (o.comm.sliceBytes > 0)
    for (DataType t : o.data.types) {
      const std::int64_t count = shapeOf(c, o.sweep.maxBytes, sizeOf(t), n).count;
      try {
        checkSlicing({c, count, t, ReduceOp::Sum, 0}, n, static_cast<std::size_t>(o.comm.sliceBytes), 0);
      } catch (const InvalidArgument& e) {
        throw UsageError(std::string("--slice: ") + e.what());
      }
    }
}

}  // namespace cclab::bench
