#include "trainer/report/text_report.h"

#include "fmt/format.h"
#include "fmt/ostream.h"
#include "trainer/metrics/gradient_stats.h"
#include "trainer/model/layout.h"
#include "trainer/report/model_info.h"

namespace cclab::trainer {

void printHeader(std::ostream& out, const TrainConfig& c, const std::string& dataName, const RunInfo& info) {
  fmt::print(out, "# cclab-train: {} {} workers, data {}, MLP {}, {} epochs, batch {} ({} per worker, {} micro-batches)\n",
             name(c.mode), c.workers, dataName, formatWidths(c.widths), c.epochs, c.batch, c.workerBatch(),
             c.microBatches);
  fmt::print(out, "# sgd lr {} momentum {} weight decay {}; ", c.sgd.lr, c.sgd.momentum, c.sgd.weightDecay);
  if (c.mode == Mode::Sync)
    fmt::print(out, "backend {}, algo {}, buckets {}/{} bytes, overlap {}", name(c.sync.backend),
               plan::name(c.sync.algorithm), c.sync.firstBucketBytes, c.sync.bucketBytes, c.sync.overlap ? "on" : "off");
  else
    fmt::print(out, "dc-lambda {}{}, forced staleness {}, ssp {}", c.async.dcLambda, c.async.dcAdaptive ? " (adaptive)" : "",
               c.async.forcedStaleness, c.async.sspBound < 0 ? std::string("none") : std::to_string(c.async.sspBound));
  fmt::print(out, "; straggler {}; shard {}\n", format(c.straggler), format(c.shard));
  const ModelInfo m = describeModel(c);
  if (m.syntheticParameters > 0)
    fmt::print(out, "# model {}: {:.2f} M parameters in {} tensors ({} synthetic: {:.2f} M, gradients of the right size and FLOPs, "
               "no math), {} buckets; accuracy reflects the implemented MLP only ({} parameters)\n", m.description,
               static_cast<double>(m.parameters) / 1e6, m.tensors, m.syntheticTensors,
               static_cast<double>(m.syntheticParameters) / 1e6, m.buckets, m.implementedParameters);
  if (c.compute.active())
    fmt::print(out, "# compute model {}: {:.1f} TFLOP/s ({}; {}); compute time = FLOPs / rate ({:.3g} FLOPs per worker-step), "
               "communication real\n", c.compute.name, c.compute.flopsPerS / 1e12, c.compute.precision, c.compute.source,
               m.stepFlopsPerWorker);
  fmt::print(out, "# {} ({} cores), {}\n", info.host, info.cores, info.dateUtc);
}

void printProgress(std::ostream& out, const EpochRecord& e, int epochs) {
  fmt::print(out, "epoch {:>3}/{}: train loss {:.4f}  test loss {:.4f}  test acc {:6.2f}%  {:9.0f} samples/s  {:7.1f} s\n",
             e.epoch + 1, epochs, e.trainLoss, e.testLoss, 100.0 * e.testAccuracy, e.samplesPerS, e.trainTimeS);
  out.flush();
}

namespace {

void printRanks(std::ostream& out, const TrainConfig& c, const RankReport& r) {
  if (r.ranks.size() < 2) return;
  fmt::print(out, "#\n# {:>4} {:>11} {:>12} {:>9} {:>9} {:>9} {:>7} {:>14}\n", "rank", "compute us", "exposed us",
             "wait us", "realised", "slowdown", "last %", "cost others us");
  for (const RankFigures& f : r.ranks) {
    const std::string last = r.detectable ? fmt::format("{:.1f}", 100.0 * f.lastShare) : std::string("-");
    const std::string cost = r.detectable ? fmt::format("{:.0f}", f.causedWaitUs) : std::string("-");
    fmt::print(out, "  {:>4} {:>11.0f} {:>12.0f} {:>9.0f} {:>8.3f}x {:>8.3f}x {:>7} {:>14}\n", f.rank, f.computeUs,
               f.exposedCommUs, f.waitUs, f.realisedFactor, f.slowdown, last, cost);
  }
  if (c.mode != Mode::Sync) {
    fmt::print(out, "# stragglers      not named in async runs (no allreduce to arrive at); see compute per rank\n");
    return;
  }
  const std::vector<int> named = r.stragglers();
  if (named.empty()) {
    fmt::print(out, "# stragglers      none ({} allreduces; rule: {})\n", r.allreduces, stragglerRule());
    return;
  }
  for (int k : named) {
    const RankFigures& f = r.ranks[static_cast<std::size_t>(k)];
    fmt::print(out, "# straggler       rank {}: device compute {:.2f}x the others' median, last at {:.0f}% of {} allreduces, "
               "cost the others {:.1f} ms of waiting\n", f.rank, f.slowdown, 100.0 * f.lastShare, r.allreduces,
               f.causedWaitUs / 1e3);
  }
  fmt::print(out, "# (rule: {})\n", stragglerRule());
}

}  // namespace

void printSummary(std::ostream& out, const TrainConfig& c, const RunResult& run, const Summary& s) {
  fmt::print(out, "#\n# {:>6} {:>9} {:>12} {:>10} {:>11} {:>11}\n", "epoch", "time(s)", "samples/s", "train loss",
             "test loss", "test acc %");
  for (const EpochRecord& e : run.epochs)
    fmt::print(out, "  {:>6} {:>9.2f} {:>12.0f} {:>10.4f} {:>11.4f} {:>11.2f}\n", e.epoch + 1, e.trainTimeS, e.samplesPerS,
               e.trainLoss, e.testLoss, 100.0 * e.testAccuracy);
  fmt::print(out, "#\n# communicator: {}\n", run.communicator);
  for (std::size_t r = 0; r < run.rankLocations.size(); ++r)  // under mpirun: where each rank's process ran
    fmt::print(out, "#   rank {:>3}: {}\n", r, run.rankLocations[r]);
  fmt::print(out, "# throughput      {:.0f} samples/s over {:.2f} s of training\n", s.samplesPerS, s.trainTimeS);
  if (c.compute.active())
    fmt::print(out, "# clock           emulated {} (compute = FLOPs / rate, communication real); wall time {:.2f} s\n",
               c.compute.name, run.wallTrainTimeS);
  fmt::print(out, "# step time       mean {:.0f} us, p50 {:.0f} us, p99 {:.0f} us ({} worker-steps)\n", s.stepUsMean,
             s.stepUsP50, s.stepUsP99, s.workerSteps);
  fmt::print(out, "# step split      compute {:.0f} us, exposed comm {:.0f} us, wait {:.0f} us (comm busy {:.0f} us)\n",
             s.computeUs, s.exposedCommUs, s.waitUs, s.commBusyUs);
  fmt::print(out, "# comm fraction   {:.2f}%  wait fraction {:.2f}%", 100.0 * s.commFraction, 100.0 * s.waitFraction);
  if (c.mode == Mode::Sync) fmt::print(out, "  overlap ratio {:.2f}", s.overlapRatio);
  fmt::print(out, "\n");
  if (c.mode == Mode::Async)
    fmt::print(out, "# staleness       mean {:.2f}, p50 {}, p99 {}, max {}\n", s.stalenessMean, s.stalenessP50,
               s.stalenessP99, s.stalenessMax);
  if (run.sspMaxGap >= 0)
    fmt::print(out, "# ssp gap         max {} pushes ahead of the slowest worker (bound {})\n", run.sspMaxGap, c.async.sspBound);
  fmt::print(out, "# test accuracy   final {:.2f}%, best {:.2f}%\n", 100.0 * s.finalTestAccuracy, 100.0 * s.bestTestAccuracy);
  const GradientSummary g = summarizeGradients(run.steps, c.workers);
  if (g.steps > 0) {
    fmt::print(out, "# gradients       per step means over {} steps: worker norm {:.4g}, norm of the mean {:.4g}, across-worker "
               "variance {:.4g} ({:.3f}x the mean's squared norm)\n", g.steps, g.workerNormMean, g.meanNormMean,
               g.varianceMean, g.noiseRatioMean);
    if (g.rankNormMean.size() > 1) {
      std::string per;
      for (std::size_t k = 0; k < g.rankNormMean.size(); ++k) per += fmt::format("{}{}: {:.4g}", k ? ", " : "", k, g.rankNormMean[k]);
      fmt::print(out, "# worker norms    mean per rank: {}\n", per);
    }
  }
  if (s.scalingEfficiency) fmt::print(out, "# scaling eff.    {:.3f}\n", *s.scalingEfficiency);
  if (s.stragglerSlowdown) fmt::print(out, "# straggler slow. {:.3f}x\n", *s.stragglerSlowdown);
  printRanks(out, c, s.ranks);
}

}  // namespace cclab::trainer
