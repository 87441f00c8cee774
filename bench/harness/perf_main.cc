// main() of every *_perf tool (perf_main.h): usage checked, memory counted, then the sweep.
#include "bench/harness/perf_main.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "bench/harness/harness_options.h"
#include "bench/harness/perf_runner.h"
#include "bench/harness/run_header.h"
#include "bench/report/collective_shape.h"
#include "bench/report/json_report.h"
#include "bench/report/usage_error.h"
#include "collectives/conventions/job_agreement.h"
#include "collectives/conventions/memory_budget.h"
#include "collectives/conventions/output_file.h"
#include "collectives/core/knobs.h"
#include "collectives/job.h"

namespace cclab::bench {
namespace {

// One line, whatever the message holds.
std::string oneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

int fail(const char* tool, int status, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", tool, oneLine(message).c_str());
  return status;
}

// Under mpirun the ranks are the processes (proc); otherwise the best backend present.
Backend chooseBackend(const CommSelection& c) {
  if (c.backend) return *c.backend;
  if (backendAvailable(Backend::Proc)) return Backend::Proc;
  return backendAvailable(Backend::Cuda) ? Backend::Cuda : Backend::Host;
}

RunInfo runInfo(plan::Collective collective, const HarnessOptions& o, Backend backend, const Communicator& comm,
                const MachineInfo& machine, const std::string& date, const std::string& command) {
  RunInfo info;
  info.collective = std::string(plan::name(collective));
  info.backend = std::string(name(backend));
  info.algo = std::string(plan::name(plan::generatedAlgorithm(collective, o.comm.algorithm)));  // what runs (dbtree bcast = tree)
  info.nranks = comm.nranks();
  info.type = o.data.typeSpec;
  info.op = plan::reduces(collective) ? o.data.opSpec : "none";
  info.machine = machine;
  info.date = date;
  info.command = command;
  const IterationOptions& it = o.iteration;
  info.settings = {{"description", comm.description()},
                   {"iters", it.iters},
                   {"warmup_iters", it.warmup},
                   {"agg_iters", it.aggIters},
                   {"check", it.check},
                   {"average", std::string(name(it.average))},
                   {"iter_bytes", it.iterBytes},
                   {"slice_bytes", o.comm.sliceBytes},
                   {"channels", o.comm.channels},
                   {"ranks_per_node", o.comm.ranksPerNode.value_or(0)},
                   {"timeout_ms", o.comm.timeout.count()},
                   {"straggler_rank", o.comm.straggler.rank},
                   {"straggler_delay_us", std::chrono::duration<double, std::micro>(o.comm.straggler.startDelay).count()}};
  return info;
}

// Refuses a run whose buffers cannot fit before anything is allocated (instead of an OOM kill minutes
// later). The host backend's ranks live in host memory; a device backend's buffers are the backend's
// to check against its free memory (conventions::requireMemory), only the host staging counts here.
std::int64_t hostBytes(plan::Collective collective, const HarnessOptions& o, Backend backend) {
  const RunBuffers largest = largestBuffers(collective, o.sweep.maxBytes, o.data.types, o.comm.nranks);
  const bool ranksOnHost = backend == Backend::Host || backend == Backend::Proc;  // proc: -g ranks in this process
  return hostBytesNeeded(largest, o.comm.nranks, ranksOnHost, o.iteration.check != 0);
}

std::string memoryWhat(const HarnessOptions& o) {
  return "-e " + std::to_string(o.sweep.maxBytes) + " on -g " + std::to_string(o.comm.nranks);
}

// Refuses a run whose buffers cannot fit before anything is allocated (instead of an OOM kill minutes
// later). The host backend's ranks live in host memory; a device backend's buffers are the backend's
// to check against its free memory (conventions::requireMemory), only the host staging counts here.
// Under mpirun the agreement also sums the processes of each host.
void requireHostMemory(plan::Collective collective, const HarnessOptions& o, Backend backend) {
  const std::optional<std::int64_t> available = conventions::hostMemoryAvailable();
  if (!available) return;
  conventions::requireMemory(hostBytes(collective, o, backend), *available, memoryWhat(o), "host memory (MemAvailable)");
}

// What every process of an mpirun job must agree on (the fields in the order a mismatch is named).
conventions::JobProposal proposal(plan::Collective collective, const HarnessOptions& o) {
  conventions::JobProposal p;
  p.add("the collective", std::string(plan::name(collective)));
  p.add("-b", std::to_string(o.sweep.minBytes));
  p.add("-e", std::to_string(o.sweep.maxBytes));
  p.add("-f", std::to_string(o.sweep.stepFactor));
  p.add("-i", std::to_string(o.sweep.stepBytes));
  p.add("-g", std::to_string(o.comm.nranks));
  p.add("-t", std::to_string(o.threads));
  p.add("-d", o.data.typeSpec);
  p.add("-o", o.data.opSpec);
  p.add("-r", std::to_string(o.data.root));
  p.add("-n", std::to_string(o.iteration.iters));
  p.add("-w", std::to_string(o.iteration.warmup));
  p.add("-m", std::to_string(o.iteration.aggIters));
  p.add("-c", std::to_string(o.iteration.check));
  p.add("-a", std::string(name(o.iteration.average)));
  p.add("--iter-bytes", std::to_string(o.iteration.iterBytes));
  p.add("--backend", o.comm.backend ? std::string(name(*o.comm.backend)) : "default");
  p.add("--algo", std::string(plan::name(o.comm.algorithm)));
  p.add("--channels", std::to_string(o.comm.channels));
  p.add("--slice", std::to_string(o.comm.sliceBytes));
  p.add("--ranks-per-node", std::to_string(o.comm.ranksPerNode.value_or(0)));
  p.add("--order", std::to_string(static_cast<int>(o.comm.order)));
  p.add("--timeout", std::to_string(o.comm.timeout.count()));
  p.add("--straggler", format(o.comm.straggler));
  return p;
}

}  // namespace

void checkKnobs() {
  try {
    knobs::checkAll();
  } catch (const InvalidArgument& e) {
    throw UsageError(e.what());
  }
}

int perfMain(int argc, const char* const* argv, plan::Collective collective) {
  conventions::ignoreFileSizeSignal();  // ulimit -f: -J and the shared segments fail with one line, not SIGXFSZ
  startJob();  // under mpirun MPI_Init comes first: a process leaving before it leaves the others blocked in theirs
  const char* tool = perfToolName(collective);
  HarnessOptions options;
  std::optional<JsonReportFile> json;
  std::optional<std::string> usage;  // the usage error, if any
  CommandLine cli(tool);
  try {
    addHarnessFlags(cli, options);
    cli.parse(argc, argv);
    if (!options.help && !options.helpEnv) {
      checkKnobs();
      applyEnvironment(options);
      applyThreads(options);
      validate(options, collective);
      if (!options.jsonPath.empty()) json.emplace(options.jsonPath);
    }
  } catch (const UsageError& e) {
    usage = e.what();
  }
  if (jobSpansProcesses()) {  // every process checks its command line against the others' before anything runs
    conventions::JobProposal p;
    if (usage) {
      p.status = conventions::JobStatus::Usage;
      p.message = oneLine(*usage);
    } else if (options.help || options.helpEnv) {
      p.status = conventions::JobStatus::Help;
      p.message = options.help ? "--help" : "--help-env";
    } else {
      p = proposal(collective, options);
      p.hostBytes = hostBytes(collective, options, chooseBackend(options.comm));
      p.memoryWhat = memoryWhat(options);
    }
    const conventions::JobVerdict verdict = agreeOnJob(tool, std::move(p));
    if (verdict.action == conventions::JobAction::Refuse) return kExitUsage;  // rank 0 said why
    if (verdict.action == conventions::JobAction::Help && jobProcessRank() != 0) return kExitOk;
  }
  if (usage) return fail(tool, kExitUsage, *usage);
  if (options.help) {
    std::fputs(cli.usage().c_str(), stdout);
    return kExitOk;
  }
  if (options.helpEnv) {
    std::fputs(knobs::helpText().c_str(), stdout);
    return kExitOk;
  }

  const Backend backend = chooseBackend(options.comm);
  if (options.threads > 1 && backend != Backend::Host)
    return fail(tool, kExitUsage, "-t > 1 is for the host backend (the " + std::string(name(backend)) + " backend was chosen)");
  std::string why;
  if (!backendAvailable(backend, &why))
    return fail(tool, kExitUsage, std::string(name(backend)) + " backend unavailable: " + why);
  try {
    requireHostMemory(collective, options, backend);
  } catch (const InvalidArgument& e) {
    return fail(tool, kExitUsage, e.what());
  }

  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  ResultLog log;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> quiet(nullptr, std::fclose);
  try {
    std::unique_ptr<Communicator> comm;
    try {
      CommConfig config;
      config.nranks = options.comm.nranks;
      config.order = options.comm.order;
      comm = makeCommunicator(backend, config);
    } catch (const InvalidArgument& e) {
      return fail(tool, kExitUsage, e.what());
    }
    if (const std::optional<std::size_t> most = comm->maxBufferBytes()) {  // before any buffer is allocated
      const RunBuffers largest = largestBuffers(collective, options.sweep.maxBytes, options.data.types, comm->nranks());
      const std::size_t needed = std::max(largest.sendBytes, largest.recvBytes);
      if (needed > *most && !comm->printsReport()) return kExitUsage;  // every rank refuses; rank 0 says why
      if (needed > *most)
        return fail(tool, kExitUsage, "-e " + std::to_string(options.sweep.maxBytes) + " needs a buffer of " + std::to_string(needed) +
                                          " bytes; the " + std::string(name(backend)) + " backend takes at most " + std::to_string(*most) +
                                          " per buffer (half of each rank's shared segment: set CCLAB_PROC_SHM_BYTES, /dev/shm permitting)");
    }
    if (!comm->printsReport()) {  // under mpirun only rank 0 prints the table (and writes -J)
      quiet.reset(std::fopen("/dev/null", "w"));
      json.reset();
    }
    const TablePrinter table(quiet ? quiet.get() : stdout);
    const MachineInfo machine = currentMachine();
    const std::string date = currentDateUtc();
    printRunHeader(table, tool, collective, options, *comm, machine, date);
    table.columnHeader();
    PerfRunner runner(*comm, collective, options);
    runner.run(table, log);
    table.footer(log);  // ends with a "#" line
    for (const std::string& line : runner.arrivals().lines()) table.headerLine(line);
    if (json) {
      RunInfo info = runInfo(collective, options, backend, *comm, machine, date, commandLineOf(argc, argv));
      info.arrivals = runner.arrivals().json();
      json->write(info, log);
    }
  } catch (const std::bad_alloc&) {
    return fail(tool, kExitFailure, "error: out of memory (buffers for -e " + std::to_string(options.sweep.maxBytes) +
                                        " on " + std::to_string(options.comm.nranks) + " ranks)");
  } catch (const std::exception& e) {
    return fail(tool, kExitFailure, std::string("error: ") + e.what());
  }
  return log.failedChecks() ? kExitFailure : kExitOk;
}

}  // namespace cclab::bench
