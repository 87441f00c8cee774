#include "trainer/cli/options.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <vector>

#include "collectives/conventions/output_file.h"
#include "collectives/conventions/size.h"
#include "collectives/core/errors.h"
#include "collectives/job.h"
#include "trainer/model/layout.h"

namespace cclab::trainer {

namespace {

// A file flag given empty is refused (it used to mean "not given": -J '' wrote nothing, exit 0).
const CLI::Validator nonEmptyPath([](const std::string& s) { return s.empty() ? std::string("an empty path (give a file name)") : std::string(); },
                                  "PATH");

// Options that change nothing in a mode are refused, so a run is never labelled with a setting it
// ignored (sync has no parameter server, async no allreduce).
void refuseOptionsWithoutEffect(const CLI::App& app, Mode mode) {
  const bool sync = mode == Mode::Sync;
  const auto ignored = sync ? std::vector<std::string>{"--dc-lambda", "--dc-adaptive", "--ssp", "--forced-staleness"}
                            : std::vector<std::string>{"--bucket", "--first-bucket", "--no-overlap", "--algo", "--backend"};
  for (const std::string& flag : ignored)
    if (app.count(flag) > 0)
      throw InvalidArgument(flag + " has no effect with --mode " + std::string(name(mode)) + " (it applies to --mode " +
                            (sync ? "async" : "sync") + " only)");
}

}  // namespace

void checkOutputs(const OutputOptions& o) {
  if (!o.jsonPath.empty()) conventions::checkWritable(o.jsonPath, "-J");
  if (!o.tracePath.empty()) conventions::checkWritable(o.tracePath, "--trace");
  if (!o.weightsPath.empty()) conventions::checkWritable(o.weightsPath, "--save-weights");
  conventions::checkDistinctOutputs({{"-J", o.jsonPath}, {"--trace", o.tracePath}, {"--save-weights", o.weightsPath}});
}

std::optional<CliOptions> parseCommandLine(int argc, const char* const* argv, std::ostream& help) {
  CliOptions o;
  TrainConfig& t = o.train;
  for (int i = 0; i < argc; ++i) {
    if (i) o.commandLine += ' ';
    o.commandLine += argv[i];
  }

  CLI::App app{"cclab-train: synchronous and asynchronous data-parallel training of an MLP (docs/trainer.md)"};
  std::string mode = "sync", widths{kDefaultWidths}, algo = "auto", backend = "host", remainder = "pad";
  std::string shard = "shuffle-each-epoch";
  std::string bucket = "25M", firstBucket = "1M", straggler, layers, computeModel;
  bool noOverlap = false;
  app.add_option("--data", o.data.name, "fashion-mnist or synthetic")->capture_default_str();
  app.add_option("--data-dir", o.data.dir, "directory of the Fashion-MNIST IDX .gz files")->capture_default_str();
  app.add_option("--synthetic-samples", o.data.synthetic.trainSamples, "synthetic training samples")->capture_default_str();
  app.add_option("--mode", mode, "sync or async")->capture_default_str();
  app.add_option("--workers", t.workers, "worker threads (ranks)")->capture_default_str();
  app.add_option("--epochs", t.epochs, "epochs")->capture_default_str();
  app.add_option("--batch", t.batch, "global batch: samples per step over all workers")->capture_default_str();
  app.add_option("--micro-batches", t.microBatches, "gradient accumulation: micro-batches per step")->capture_default_str();
  app.add_option("--steps-per-epoch", t.maxStepsPerEpoch, "cap on steps per epoch (0: all)")->capture_default_str();
  app.add_option("--lr", t.sgd.lr, "learning rate")->capture_default_str();
  app.add_option("--momentum", t.sgd.momentum, "SGD momentum")->capture_default_str();
  app.add_option("--weight-decay", t.sgd.weightDecay, "weight decay")->capture_default_str();
  app.add_option("--layers", layers, "the implemented MLP's layer widths, e.g. 784,4096,4096,10 (default 784,256,128,10)");
  app.add_option("--widths", widths, "the old name of --layers (784-256-128-10 still accepted)")->capture_default_str();
  app.add_option("--model", t.model, "mlp, or a preset adding synthetic gradients of a real network: resnet50, bert-base")
      ->capture_default_str();
  app.add_option("--compute-model", computeModel,
                 "emulated device: h100, h200, a100 or TFLOP/s; compute time = FLOPs / rate (sync only)");
  app.add_option("--seed", t.seed, "seed for initialisation and shuffling")->capture_default_str();
  app.add_option("--remainder", remainder, "pad or drop: how shards are made equal")->capture_default_str();
  app.add_option("--shard", shard,
                 "how workers split the data: shuffle-each-epoch, shuffle-once, contiguous, label-skew:ALPHA, hard-to:RANK")
      ->capture_default_str();
  app.add_option("--algo", algo, "allreduce algorithm: ring, tree, dbtree, rhd, auto")->capture_default_str();
  app.add_option("--backend", backend, "host, cuda, nccl, or proc (one rank per process under mpirun; its default there)")->capture_default_str();
  app.add_option("--bucket", bucket, "gradient bucket size (K/M/G)")->capture_default_str();
  app.add_option("--first-bucket", firstBucket, "first gradient bucket size (K/M/G)")->capture_default_str();
  app.add_flag("--no-overlap", noOverlap, "start allreduces only after the whole backward");
  app.add_option("--dc-lambda", t.async.dcLambda, "DC-ASGD compensation lambda (async; 0: off)")->capture_default_str();
  app.add_flag("--dc-adaptive", t.async.dcAdaptive, "DC-ASGD-a: lambda / sqrt(moving mean square of g) (async)");
  app.add_option("--forced-staleness", t.async.forcedStaleness,
                 "async: every pull returns the parameters K updates old (0: off)")->capture_default_str();
  app.add_option("--ssp", t.async.sspBound, "SSP staleness bound (async; -1: none)")->capture_default_str();
  app.add_option("--straggler", straggler, "RANK:compute=FACTOR, e.g. 1:compute=1.4 (40% slower compute; 1:1.4 also)");
  app.add_option("-J,--json", o.output.jsonPath, "write results as JSON")->check(nonEmptyPath);
  app.add_option("--trace", o.output.tracePath, "write a Chrome-trace timeline")->check(nonEmptyPath);
  app.add_option("--save-weights", o.output.weightsPath, "write the final parameters as raw float32")->check(nonEmptyPath);
  app.add_option("--scaling-baseline", o.output.scalingBaseline, "-J file of a run with fewer workers")->check(nonEmptyPath);
  app.add_option("--straggler-baseline", o.output.stragglerBaseline, "-J file of the same run without straggler")->check(nonEmptyPath);
  app.add_flag("-q,--quiet", o.output.quiet, "no progress on stderr");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    help << app.help();
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    throw InvalidArgument(e.what());
  }
  t.mode = parseMode(mode);
  if (t.mode == Mode::Async && backend == "proc")  // before the generic refusal: say why
    throw InvalidArgument("--backend proc runs --mode sync only: the parameter server is not built across processes (docs/trainer.md)");
  refuseOptionsWithoutEffect(app, t.mode);
  o.backendGiven = app.count("--backend") > 0;
  o.workersGiven = app.count("--workers") > 0;
  // Under mpirun the proc backend runs one worker per process: --batch divides over the processes.
  if (!o.workersGiven && jobSpansProcesses() && (!o.backendGiven || backend == "proc")) t.workers = jobProcessCount();
  if (app.count("--layers") > 0 && app.count("--widths") > 0)
    throw InvalidArgument("--layers and --widths name the same thing (--widths is its old name): give one");
  t.widths = parseWidths(app.count("--layers") > 0 ? layers : widths);
  t.compute = parseComputeModel(computeModel);
  t.remainder = parseRemainder(remainder);
  t.shard = parseShard(shard);
  t.sync.backend = parseBackend(backend);
  t.sync.algorithm = plan::parseAlgorithm(algo);  // throws InvalidArgument
  // Sizes as every cclab tool reads them (collectives/conventions/size.h: 64K, 64KiB, 25M, 1G).
  t.sync.bucketBytes = static_cast<std::size_t>(conventions::parseSize(bucket, "--bucket"));
  t.sync.firstBucketBytes = static_cast<std::size_t>(conventions::parseSize(firstBucket, "--first-bucket"));
  t.sync.overlap = !noOverlap;
  if (!straggler.empty()) t.straggler = parseStraggler(straggler, BareNumber::ComputeFactor);  // RANK:FACTOR stays
  t.trace = !o.output.tracePath.empty();
  o.data.synthetic.seed = t.seed;
  if (o.data.name != "fashion-mnist" && o.data.name != "synthetic")
    throw InvalidArgument("unknown --data '" + o.data.name + "' (fashion-mnist, synthetic)");
  validate(t);
  return o;
}

}  // namespace cclab::trainer
