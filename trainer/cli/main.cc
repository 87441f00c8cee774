// cclab-train: see docs/trainer.md. Exit codes: 0 ok, 1 runtime failure (a diverged run included), 2 bad
// usage (flags, paths, an unavailable backend).
#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "collectives/conventions/limits.h"
#include "collectives/conventions/memory_budget.h"
#include "collectives/conventions/output_file.h"
#include "collectives/core/errors.h"
#include "collectives/core/knobs.h"
#include "collectives/job.h"
#include "trainer/cli/options.h"
#include "trainer/data/data_fingerprint.h"
#include "trainer/metrics/summary.h"
#include "trainer/model/layout.h"
#include "trainer/report/baseline.h"
#include "trainer/report/json_report.h"
#include "trainer/report/text_report.h"
#include "trainer/report/weights_file.h"
#include "trainer/run/divergence.h"
#include "trainer/run/trainer.h"
#include "trainer/sync/sync_trainer.h"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

// Under mpirun (the proc backend): this process's rank, else -1. A process that fails ends at once
// (main), so mpirun stops the others instead of leaving them waiting for it.
int processRank = -1;

// Under mpirun the ranks are the processes: one worker each, through the proc backend. Async has no
// form across processes (docs/trainer.md, "Under mpirun").
std::unique_ptr<cclab::Communicator> processCommunicator(const cclab::trainer::CliOptions& o,
                                                         cclab::trainer::TrainConfig& config) {
  using cclab::Backend;
  using cclab::InvalidArgument;
  const bool underMpirun = cclab::backendAvailable(Backend::Proc);
  if (underMpirun && config.mode == cclab::trainer::Mode::Async)
    throw InvalidArgument("--mode async does not run under mpirun: the parameter server is not built across processes "
                          "(run it without mpirun, as worker threads; docs/trainer.md)");
  if (underMpirun && !o.backendGiven) config.sync.backend = Backend::Proc;
  if (config.sync.backend != Backend::Proc) return nullptr;
  std::string why;
  if (!cclab::backendAvailable(Backend::Proc, &why)) throw InvalidArgument("proc backend unavailable: " + why);
  auto comm = cclab::makeCommunicator(Backend::Proc, cclab::CommConfig{.nranks = 1});
  processRank = comm->localRanks().front();
  if (o.workersGiven && config.workers != comm->nranks())
    throw InvalidArgument("--workers " + std::to_string(config.workers) + " but mpirun started " +
                          std::to_string(comm->nranks()) +
                          " processes: the proc backend runs one worker per process (leave out --workers)");
  config.workers = comm->nranks();
  cclab::trainer::validate(config);  // the batch must now divide over the processes
  return comm;
}

// What every process of an mpirun job must agree on: the run's configuration as its JSON records it
// (hyper-parameters, model shape, data, sharding, backend), the data itself (its files' content, or the
// synthetic sample count: data_fingerprint.h) and the emulated nodes.
cclab::conventions::JobProposal proposal(const cclab::trainer::CliOptions& o) {
  cclab::conventions::JobProposal p;
  const nlohmann::json config = cclab::trainer::configToJson(o.train, o.data.name);
  for (const auto& [key, value] : config.items()) p.add(key, value.dump());
  auto [dataField, dataValue] = cclab::trainer::dataAgreementField(o.data);
  p.add(std::move(dataField), std::move(dataValue));
  p.add("CCLAB_RANKS_PER_NODE", std::to_string(cclab::knobs::integer(cclab::knobs::Id::RanksPerNode).value_or(0)));
  return p;
}

// Host memory of this process's replicas: parameters, gradients and momentum of each local worker.
constexpr std::int64_t kReplicaFloats = 3;
std::int64_t replicaBytes(const cclab::trainer::TrainConfig& c, int localWorkers) {
  return cclab::conventions::saturatingBytes(cclab::trainer::replicaParameters(c), kReplicaFloats * sizeof(float) * localWorkers);
}

// The trace a run would record, bounded from above before it runs: per worker and step, the compute
// events (at most 4) and one per gradient bucket (at most one per bucket-size of parameters plus one
// per layer boundary).
std::int64_t traceEventBound(const cclab::trainer::TrainConfig& c, std::int64_t trainSamples) {
  using cclab::conventions::saturatingBytes;
  const std::int64_t params = cclab::trainer::replicaParameters(c);
  const auto bucket = static_cast<std::int64_t>(std::max<std::size_t>(c.sync.bucketBytes, sizeof(float)));
  const std::int64_t buckets = saturatingBytes(params, sizeof(float)) / bucket + static_cast<std::int64_t>(c.widths.size()) + 1;
  std::int64_t steps = std::max<std::int64_t>(1, trainSamples / std::max<std::int64_t>(c.batch, 1) + 1);
  if (c.maxStepsPerEpoch > 0) steps = std::min(steps, c.maxStepsPerEpoch);
  return saturatingBytes(saturatingBytes(saturatingBytes(c.epochs, steps), c.workers), buckets + 4);
}

int run(int argc, char** argv) {
  using namespace cclab::trainer;
  std::ostringstream help;
  std::optional<CliOptions> options;
  std::optional<std::string> usage;
  try {
    cclab::knobs::checkAll();  // a bad CCLAB_* value is a usage error, before anything runs
    options = parseCommandLine(argc, argv, help);
  } catch (const cclab::InvalidArgument& e) {
    usage = e.what();
  }
  if (cclab::jobSpansProcesses()) {  // every process checks its command line against the others' first
    cclab::conventions::JobProposal p;
    if (usage) {
      p.status = cclab::conventions::JobStatus::Usage;
      p.message = *usage;
    } else if (!options) {
      p.status = cclab::conventions::JobStatus::Help;
      p.message = "--help";
    } else {
      p = proposal(*options);
      const bool oneWorkerEach = !options->backendGiven || options->train.sync.backend == cclab::Backend::Proc;
      p.hostBytes = replicaBytes(options->train, oneWorkerEach ? 1 : options->train.workers);
      p.memoryWhat = "--layers " + formatWidths(options->train.widths);
    }
    const cclab::conventions::JobVerdict verdict = cclab::agreeOnJob("cclab-train", std::move(p));
    if (verdict.action == cclab::conventions::JobAction::Refuse) return kExitUsage;  // rank 0 said why
    if (verdict.action == cclab::conventions::JobAction::Help && cclab::jobProcessRank() != 0) return 0;
  }
  if (usage) throw cclab::InvalidArgument(*usage);
  if (!options) {
    std::cout << help.str();
    return 0;
  }
  TrainConfig config = options->train;
  const std::unique_ptr<cclab::Communicator> comm = processCommunicator(*options, config);
  const bool reports = !comm || comm->printsReport();  // under mpirun: rank 0 alone prints and writes files
  checkOutputs(options->output);  // before training: a run must not end unable to save its results
  if (const auto available = cclab::conventions::hostMemoryAvailable())
    cclab::conventions::requireMemory(replicaBytes(config, comm ? 1 : config.workers), *available,
                                      "--layers " + formatWidths(config.widths) + " on " +
                                          std::to_string(comm ? 1 : config.workers) + " workers' replicas",
                                      "host memory (MemAvailable)");
  if (config.sync.backend != cclab::Backend::Host && !comm) {
    std::string why;
    if (!cclab::backendAvailable(config.sync.backend, &why))
      throw cclab::InvalidArgument(std::string(cclab::name(config.sync.backend)) + " backend unavailable: " + why);
  }
  std::optional<BaselineRun> scaling, straggler;  // read (and parsed) before loading data: fail fast
  if (!options->output.scalingBaseline.empty()) scaling = readBaseline(options->output.scalingBaseline);
  if (!options->output.stragglerBaseline.empty()) straggler = readBaseline(options->output.stragglerBaseline);

  // One BLAS thread per worker: the workers are the parallelism.
  openblas_set_num_threads(1);
  const DataSplit data = loadData(options->data);
  if (config.trace)
    cclab::conventions::requireAtMost(traceEventBound(config, static_cast<std::int64_t>(data.train.size())), cclab::conventions::kMaxTraceEvents,
                                      "--trace: the events this run may record", "fewer epochs, --steps-per-epoch or a larger --bucket");
  // Baselines are checked against this run's configuration before training (the data's name is part of it).
  Baselines baselines;
  const nlohmann::json runConfig = configToJson(config, data.name);
  if (scaling) {
    checkBaseline(BaselineKind::Scaling, runConfig, *scaling, options->output.scalingBaseline);
    baselines.scalingSamplesPerS = scaling->samplesPerS;
    baselines.scalingWorkers = scaling->workers;
  }
  if (straggler) {
    checkBaseline(BaselineKind::Straggler, runConfig, *straggler, options->output.stragglerBaseline);
    baselines.stragglerFreeSamplesPerS = straggler->samplesPerS;
  }
  const RunInfo info = currentRunInfo(options->commandLine);
  if (reports) printHeader(std::cout, config, data.name, info);
  std::cout.flush();
  EpochObserver progress;
  if (!options->output.quiet && reports) progress = [&](const EpochRecord& e) { printProgress(std::cerr, e, config.epochs); };
  const RunResult result = comm ? runSync(config, data, *comm, progress) : train(config, data, progress);
  const Summary summary = summarize(result, config.workers, baselines);
  if (!reports)  // every process knows the maximum; rank 0 writes the files, then names it
    return config.mode == Mode::Sync && result.replicaDivergence != 0.0 ? kExitFailure : 0;
  printSummary(std::cout, config, result, summary);
  if (!options->output.jsonPath.empty())
    writeJson(options->output.jsonPath, runToJson(config, data.name, info, result, summary));
  if (!options->output.tracePath.empty()) writeChromeTrace(options->output.tracePath, result.trace, config.workers);
  if (!options->output.weightsPath.empty()) writeWeights(options->output.weightsPath, result.finalParams);
  if (config.mode == Mode::Sync) checkReplicasAgree(result.replicaDivergence);  // after the files that show it
  return 0;
}

// Under mpirun a failing process leaves at once, without MPI_Finalize (which would wait for the others):
// mpirun sees it exit non-zero and stops the job. Its shared segments are gone already (the
// communicator was destroyed while the exception left run()).
int fail(int status, const char* what) {
  if (processRank < 0) {
    std::cerr << "cclab-train: " << what << '\n';
    return status;
  }
  std::cout.flush();
  std::cerr << "cclab-train: rank " << processRank << ": " << what << std::endl;
  std::_Exit(status);
}

}  // namespace

int main(int argc, char** argv) {
  cclab::conventions::ignoreFileSizeSignal();  // ulimit -f: outputs and shared segments fail with one line, not SIGXFSZ
  cclab::startJob();  // under mpirun MPI_Init comes first: a process leaving before it leaves the others blocked in theirs
  try {
    return run(argc, argv);
  } catch (const cclab::InvalidArgument& e) {
    return fail(kExitUsage, e.what());
  } catch (const std::exception& e) {
    return fail(kExitFailure, e.what());
  }
}
