#include "trainer/cli/options.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <charconv>

#include "collectives/core/errors.h"
#include "trainer/model/layout.h"

namespace cclab::trainer {

std::size_t parseByteSize(std::string_view s) {
  constexpr unsigned kKiloShift = 10;
  std::size_t value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  const std::string_view unit(ptr, static_cast<std::size_t>(s.data() + s.size() - ptr));
  unsigned shift = 0;
  if (unit.size() == 1) {
    switch (std::toupper(static_cast<unsigned char>(unit[0]))) {
      case 'K': shift = kKiloShift; break;
      case 'M': shift = 2 * kKiloShift; break;
      case 'G': shift = 3 * kKiloShift; break;
      default: shift = ~0U;
    }
  } else if (!unit.empty()) {
    shift = ~0U;
  }
  if (ec != std::errc() || ptr == s.data() || shift == ~0U)
    throw InvalidArgument("bad size '" + std::string(s) + "' (expected e.g. 4096, 64K, 25M, 1G)");
  return value << shift;
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
  std::string bucket = "25M", firstBucket = "1M", straggler;
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
  app.add_option("--widths", widths, "MLP layer widths")->capture_default_str();
  app.add_option("--seed", t.seed, "seed for initialisation and shuffling")->capture_default_str();
  app.add_option("--remainder", remainder, "pad or drop: how shards are made equal")->capture_default_str();
  app.add_option("--algo", algo, "allreduce algorithm: ring, tree, dbtree, rhd, auto")->capture_default_str();
  app.add_option("--backend", backend, "host, cuda or nccl")->capture_default_str();
  app.add_option("--bucket", bucket, "gradient bucket size (K/M/G)")->capture_default_str();
  app.add_option("--first-bucket", firstBucket, "first gradient bucket size (K/M/G)")->capture_default_str();
  app.add_flag("--no-overlap", noOverlap, "start allreduces only after the whole backward");
  app.add_option("--dc-lambda", t.async.dcLambda, "DC-ASGD compensation lambda (async; 0: off)")->capture_default_str();
  app.add_option("--ssp", t.async.sspBound, "SSP staleness bound (async; -1: none)")->capture_default_str();
  app.add_option("--straggler", straggler, "RANK:FACTOR, e.g. 1:1.4 (40% slower compute)");
  app.add_option("-J,--json", o.output.jsonPath, "write results as JSON");
  app.add_option("--trace", o.output.tracePath, "write a Chrome-trace timeline");
  app.add_option("--scaling-baseline", o.output.scalingBaseline, "-J file of a run with fewer workers");
  app.add_option("--straggler-baseline", o.output.stragglerBaseline, "-J file of the same run without straggler");
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
  t.widths = parseWidths(widths);
  t.remainder = parseRemainder(remainder);
  t.sync.backend = parseBackend(backend);
  t.sync.algorithm = plan::parseAlgorithm(algo);  // throws InvalidArgument
  t.sync.bucketBytes = parseByteSize(bucket);
  t.sync.firstBucketBytes = parseByteSize(firstBucket);
  t.sync.overlap = !noOverlap;
  if (!straggler.empty()) t.straggler = parseStraggler(straggler);
  t.trace = !o.output.tracePath.empty();
  o.data.synthetic.seed = t.seed;
  if (o.data.name != "fashion-mnist" && o.data.name != "synthetic")
    throw InvalidArgument("unknown --data '" + o.data.name + "' (fashion-mnist, synthetic)");
  validate(t);
  return o;
}

}  // namespace cclab::trainer
