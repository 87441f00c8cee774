#include "bench/harness/harness_options.h"

#include "bench/report/common_flags.h"
#include "bench/report/usage_error.h"
#include "bench/report/value_parse.h"

namespace cclab::bench {
namespace {

// A day: any longer "delay" or "timeout" is a typo.
constexpr std::int64_t kMaxTimeoutMs = std::int64_t{86400} * 1000;

void setTypes(DataSelection& d, std::string_view v) {
  d.typeSpec = std::string(v);
  d.types.clear();
  if (v == "all")
    d.types.assign(std::begin(kAllDataTypes), std::end(kAllDataTypes));
  else
    d.types.push_back(parseDataType(v));
}

void setOps(DataSelection& d, std::string_view v) {
  d.opSpec = std::string(v);
  d.ops.clear();
  if (v == "all")
    d.ops.assign(std::begin(kAllReduceOps), std::end(kAllReduceOps));
  else
    d.ops.push_back(parseReduceOp(v));
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
  cli.addOption('t', "nthreads", "1", "host threads driving the ranks (only 1: one thread drives all with a group call)",
                [](std::string_view v) { parseInteger(v, 1, 1, "threads (use -g for ranks)"); });
  cli.addOption('d', "datatype", "TYPE", "float double half bfloat16 int32 int8 uint8, or all (default float)",
                [&o](std::string_view v) { setTypes(o.data, v); });
  cli.addOption('o', "op", "OP", "sum prod min max avg, or all (default sum)", [&o](std::string_view v) { setOps(o.data, v); });
  cli.addOption('r', "root", "RANK", "root of broadcast and reduce (default 0)",
                [&o](std::string_view v) { o.data.root = static_cast<int>(parseInteger(v, 0, kMaxRanks - 1, "root")); });
  addJsonFlag(cli, o.jsonPath);
  cli.addOption('\0', "backend", "NAME", "host, cuda or nccl (default: cuda when a GPU is there, else host)",
                [&o](std::string_view v) { o.comm.backend = parseBackend(v); });
  cli.addOption('\0', "algo", "NAME", "ring tree dbtree rhd rd chain auto (default auto)",
                [&o](std::string_view v) { o.comm.algorithm = plan::parseAlgorithm(v); });
  cli.addOption('\0', "slice", "SIZE", "pipeline slice in bytes, K/M/G suffix (default: the backend's)",
                [&o](std::string_view v) { o.comm.sliceBytes = parseSize(v); });
  cli.addOption('\0', "straggler", "RANK:delay=T", "this rank arrives T late at every collective (100us, 2ms; RANK:DELAY_US also)",
                [&o](std::string_view v) { o.comm.straggler = parseBenchStraggler(v); });
  cli.addOption('\0', "timeout", "MS", "bound on every wait inside a collective (default 30000)", [&o](std::string_view v) {
    o.comm.timeout = std::chrono::milliseconds(parseInteger(v, 1, kMaxTimeoutMs, "timeout (ms)"));
  });
  cli.addOption('\0', "order", "MODE", "cuda backend: events, graph or ll (default events)", [&o](std::string_view v) {
    if (v != "events" && v != "graph" && v != "ll") throw UsageError("'" + std::string(v) + "' is not events, graph or ll");
    o.comm.order = std::string(v);
  });
  // nccl-tests' -G N replays N iterations from a captured CUDA graph; ours captures each collective
  // once and replays it, so any N > 0 selects the graph ordering.
  cli.addOption('G', "cudagraph", "N", "cuda backend: N > 0 replays a captured CUDA graph (= --order graph)",
                [&o](std::string_view v) {
                  if (parseInteger(v, 0, 1 << 20, "cudagraph") > 0) o.comm.order = "graph";
                });
  cli.addSwitch('h', "help", "print this help", [&o] { o.help = true; });
}

void validate(const HarnessOptions& o, plan::Collective c) {
  validate(o.sweep);
  const int n = o.comm.nranks;
  if (o.comm.straggler.rank >= n)
    throw UsageError("--straggler rank " + std::to_string(o.comm.straggler.rank) + " is not a rank of -g " +
                     std::to_string(n));
  const bool rooted = plan::isRooted(c);
  if (rooted && o.data.root >= n)
    throw UsageError("-r root " + std::to_string(o.data.root) + " is not a rank of -g " + std::to_string(n));
  if (o.comm.algorithm != plan::Algorithm::Auto && !plan::hasGenerator(c, o.comm.algorithm))
    throw UsageError("--algo " + std::string(plan::name(o.comm.algorithm)) + " is not available for " +
                     std::string(plan::name(c)));
}

}  // namespace cclab::bench
