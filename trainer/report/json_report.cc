#include "trainer/report/json_report.h"

#include <cmath>

#include "collectives/conventions/output_file.h"
#include "collectives/core/errors.h"
#include "trainer/metrics/gradient_stats.h"
#include "trainer/model/layout.h"
#include "trainer/report/model_info.h"
#include "trainer/run/clock.h"

namespace cclab::trainer {
namespace {

using nlohmann::json;

double us(std::int64_t ns) { return static_cast<double>(ns) / kNsPerUs; }

json configJson(const TrainConfig& c, const std::string& dataName) {
  json straggler = nullptr;
  // "factor": the compute factor (the only one the trainer injects); "spec": the flag that reproduces it.
  if (c.straggler.rank >= 0)
    straggler = {{"rank", c.straggler.rank}, {"factor", c.straggler.computeFactor}, {"spec", format(c.straggler)}};
  return {{"data", dataName},
          {"mode", std::string(name(c.mode))},
          {"workers", c.workers},
          {"epochs", c.epochs},
          {"batch", c.batch},
          {"worker_batch", c.workerBatch()},
          {"micro_batches", c.microBatches},
          {"steps_per_epoch_cap", c.maxStepsPerEpoch},
          {"widths", c.widths},
          {"model", c.model},
          {"compute_model", computeModelJson(c.compute)},
          {"lr", c.sgd.lr},
          {"momentum", c.sgd.momentum},
          {"weight_decay", c.sgd.weightDecay},
          {"seed", c.seed},
          {"remainder", std::string(name(c.remainder))},
          {"shard", format(c.shard)},
          {"backend", std::string(name(c.sync.backend))},
          {"algo", std::string(plan::name(c.sync.algorithm))},
          {"bucket_bytes", c.sync.bucketBytes},
          {"first_bucket_bytes", c.sync.firstBucketBytes},
          {"overlap", c.sync.overlap},
          {"dc_lambda", c.async.dcLambda},
          {"dc_adaptive", c.async.dcAdaptive},
          {"forced_staleness", c.async.forcedStaleness},
          {"ssp", c.async.sspBound},
          {"straggler", straggler}};
}

json optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json ranksJson(const RankReport& r) {
  json ranks = json::array();
  for (const RankFigures& f : r.ranks)
    ranks.push_back({{"rank", f.rank},
                     {"steps", f.steps},
                     {"compute_us", f.computeUs},
                     {"exposed_comm_us", f.exposedCommUs},
                     {"wait_us", f.waitUs},
                     {"device_compute_us", f.deviceComputeUs},
                     {"realised_factor", f.realisedFactor},
                     {"slowdown", f.slowdown},
                     {"last_arrivals", f.lastArrivals},
                     {"last_share", f.lastShare},
                     {"caused_wait_us", f.causedWaitUs},
                     {"straggler", f.straggler}});
  return ranks;
}

json stragglersJson(const RankReport& r) {
  json named = json::array();
  for (int k : r.stragglers()) {
    const RankFigures& f = r.ranks[static_cast<std::size_t>(k)];
    named.push_back({{"rank", f.rank}, {"slowdown", f.slowdown}, {"realised_factor", f.realisedFactor},
                     {"last_share", f.lastShare}, {"caused_wait_us", f.causedWaitUs}});
  }
  return {{"detectable", r.detectable}, {"allreduces", r.allreduces}, {"rule", stragglerRule()}, {"named", named}};
}

json orNull(double v) { return v < 0.0 ? json(nullptr) : json(v); }

// The gradient statistics' means over the run (metrics/gradient_stats.h); null without them (async).
json gradientJson(const RunResult& run, int workers) {
  const GradientSummary g = summarizeGradients(run.steps, workers);
  if (g.steps == 0) return nullptr;
  return {{"steps", g.steps},
          {"variance_mean", g.varianceMean},
          {"mean_norm_mean", g.meanNormMean},
          {"worker_norm_mean", g.workerNormMean},
          {"noise_ratio_mean", g.noiseRatioMean},
          {"rank_norm_mean", g.rankNormMean}};
}

json summaryJson(const TrainConfig& c, const Summary& s, const RunResult& run) {
  const auto workerSteps = static_cast<double>(s.workerSteps > 0 ? s.workerSteps : 1);
  const ModelInfo model = describeModel(c);
  return {{"model", modelJson(model)},
          {"compute_model", computeModelJson(c.compute)},
          {"clock", c.compute.active() ? "emulated device: compute = FLOPs / rate, communication real" : "wall (this CPU)"},
          {"modelled_compute_us", c.compute.active() ? json(c.compute.ns(model.stepFlopsPerWorker) / kNsPerUs) : json(nullptr)},
          {"wall_train_time_s", run.wallTrainTimeS},
          {"allreduced_bytes_per_rank_step", static_cast<double>(run.allreducedBytes) / workerSteps},
          {"ranks", ranksJson(s.ranks)},
          {"stragglers", stragglersJson(s.ranks)},
          {"samples_per_s", s.samplesPerS},
          {"train_time_s", s.trainTimeS},
          {"worker_steps", s.workerSteps},
          {"step_us", {{"mean", s.stepUsMean}, {"p50", s.stepUsP50}, {"p99", s.stepUsP99}}},
          {"compute_us", s.computeUs},
          {"exposed_comm_us", s.exposedCommUs},
          {"wait_us", s.waitUs},
          {"comm_busy_us", s.commBusyUs},
          {"comm_fraction", s.commFraction},
          {"wait_fraction", s.waitFraction},
          {"overlap_ratio", s.overlapRatio},
          {"final_train_loss", s.finalTrainLoss},
          {"final_test_loss", s.finalTestLoss},
          {"final_test_accuracy", s.finalTestAccuracy},
          {"best_test_accuracy", s.bestTestAccuracy},
          {"staleness",
           {{"mean", s.stalenessMean}, {"max", s.stalenessMax}, {"p50", s.stalenessP50}, {"p99", s.stalenessP99},
            {"histogram", run.staleness.counts()}}},
          {"scaling_efficiency", optional(s.scalingEfficiency)},
          {"straggler_slowdown", optional(s.stragglerSlowdown)},
          {"ssp_max_gap", run.sspMaxGap < 0 ? json(nullptr) : json(run.sspMaxGap)},
          {"replica_divergence", run.replicaDivergence},
          {"gradient", gradientJson(run, c.workers)}};
}

}  // namespace

json runToJson(const TrainConfig& config, const std::string& dataName, const RunInfo& info, const RunResult& run,
               const Summary& summary) {
  json epochs = json::array();
  for (const EpochRecord& e : run.epochs)
    epochs.push_back({{"epoch", e.epoch},
                      {"train_loss", e.trainLoss},
                      {"test_loss", e.testLoss},
                      {"test_accuracy", e.testAccuracy},
                      {"time_s", e.trainTimeS},
                      {"samples_per_s", e.samplesPerS}});
  json steps = json::array();
  for (const StepRecord& r : run.steps)
    steps.push_back({{"epoch", r.epoch},
                     {"step", r.step},
                     {"rank", r.rank},
                     {"start_us", us(r.startNs)},
                     {"step_us", us(r.stepNs())},
                     {"compute_us", us(r.computeNs)},
                     {"exposed_comm_us", us(r.exposedCommNs)},
                     {"wait_us", us(r.waitNs)},
                     {"comm_busy_us", us(r.commBusyNs)},
                     {"overlapped_us", us(r.overlappedNs)},
                     {"peer_wait_us", us(r.peerWaitNs)},
                     {"injected_us", us(r.injectedNs)},
                     {"device_compute_us", us(r.deviceComputeNs)},
                     {"loss", r.samples ? r.lossSum / static_cast<double>(r.samples) : 0.0},
                     {"staleness", r.staleness},
                     {"grad_norm", r.gradSqNorm < 0.0 ? json(nullptr) : json(std::sqrt(r.gradSqNorm))},
                     {"mean_grad_norm", orNull(r.meanGradNorm)},
                     {"grad_variance", r.gradVariance < -0.5 ? json(nullptr) : json(r.gradVariance)}});
  json arrivals = json::array();
  for (const BucketArrival& a : run.arrivals)
    arrivals.push_back({{"epoch", a.epoch}, {"step", a.step}, {"bucket", a.bucket}, {"rank", a.rank},
                        {"arrive_us", us(a.arriveNs)}, {"end_us", us(a.endNs)}});
  json allreduces = json::array();
  for (const ArrivalOrder& o : arrivalOrders(run))
    allreduces.push_back({{"epoch", o.epoch}, {"step", o.step}, {"bucket", o.bucket}, {"order", o.order}});
  return {{"schema", kJsonSchema},
          {"machine",
           {{"host", info.host}, {"cores", info.cores}, {"date", info.dateUtc}, {"communicator", run.communicator},
            {"ranks", run.rankLocations}}},
          {"command", info.commandLine},
          {"config", configJson(config, dataName)},
          {"summary", summaryJson(config, summary, run)},
          {"epochs", epochs},
          {"steps", steps},
          {"arrivals", arrivals},
          {"allreduces", allreduces}};
}

void writeJson(const std::filesystem::path& path, const json& j) { conventions::writeFileAtomically(path, j.dump(1) + '\n'); }

nlohmann::json configToJson(const TrainConfig& config, const std::string& dataName) { return configJson(config, dataName); }

}  // namespace cclab::trainer
