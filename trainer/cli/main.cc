// cclab-train: see docs/trainer.md. Exit codes: 0 ok, 1 runtime failure (a diverged run included), 2 bad
// usage (flags, paths, an unavailable backend).
#include <cblas.h>

#include <iostream>
#include <optional>
#include <optional>

#include "collectives/core/errors.h"
#include "trainer/cli/options.h"
#include "trainer/metrics/summary.h"
#include "trainer/report/baseline.h"
#include "trainer/report/baseline.h"
#include "trainer/report/json_report.h"
#include "trainer/report/text_report.h"
#include "trainer/run/trainer.h"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int run(int argc, char** argv) {
  using namespace cclab::trainer;
  const auto options = parseCommandLine(argc, argv, std::cout);
  if (!options) return 0;
  const TrainConfig& config = options->train;
  checkOutputs(options->output);  // before training: a run must not end unable to save its results
  if (config.sync.backend != cclab::Backend::Host) {
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
  printHeader(std::cout, config, data.name, info);
  std::cout.flush();
  EpochObserver progress;
  if (!options->output.quiet) progress = [&](const EpochRecord& e) { printProgress(std::cerr, e, config.epochs); };
  const RunResult result = train(config, data, progress);
  const Summary summary = summarize(result, config.workers, baselines);
  printSummary(std::cout, config, result, summary);
  if (!options->output.jsonPath.empty())
    writeJson(options->output.jsonPath, runToJson(config, data.name, info, result, summary));
  if (!options->output.tracePath.empty()) writeChromeTrace(options->output.tracePath, result.trace, config.workers);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const cclab::InvalidArgument& e) {
    std::cerr << "cclab-train: " << e.what() << '\n';
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "cclab-train: " << e.what() << '\n';
    return kExitFailure;
  }
}
