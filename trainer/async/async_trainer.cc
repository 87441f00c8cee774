#include "trainer/async/async_trainer.h"

#include <cmath>
#include <memory>
#include <vector>

#include "trainer/async/batch_queue.h"
#include "trainer/async/parameter_server.h"
#include "trainer/async/ssp_clock.h"
#include "trainer/data/sampler.h"
#include "trainer/data/shards.h"
#include "trainer/device/virtual_gate.h"
#include "trainer/device/virtual_timeline.h"
#include "trainer/model/gradient_units.h"
#include "trainer/model/synthetic.h"
#include "trainer/model/mlp.h"
#include "trainer/run/divergence.h"
#include "trainer/run/epoch_runner.h"
#include "trainer/run/gradient_step.h"
#include "trainer/run/steps.h"

namespace cclab::trainer {
namespace {

struct AsyncShared {
  const TrainConfig& config;
  const DataSplit& data;
  const Mlp& model;
  ParameterServer& server;
  SspClock& ssp;
  BatchQueue& queue;
  const RunClock& clock;
  std::int64_t batchesPerEpoch;  // over all workers
  VirtualGate* gate = nullptr;   // --compute-model: pulls and pushes in emulated-clock order (device/virtual_gate.h)
  double modelledNs = 0.0;       // --compute-model: one step's modelled compute (forward, backward, update)
};

class AsyncWorker {
 public:
  AsyncWorker(int rank, const AsyncShared& s)
      : rank_(rank), s_(s), params_(static_cast<std::size_t>(s.model.layout().parameterCount())), grads_(params_.size()),
        step_(s.model, s.data.train, s.config.workerBatch(), s.config.microBatches),
        throttle_(s.config.straggler.rank == rank && s.gate == nullptr ? s.config.straggler.computeFactor : 1.0),
        factor_(s.config.straggler.rank == rank ? s.config.straggler.computeFactor : 1.0), trace_(s.config.trace) {}

  void runEpoch(int epoch) {
    lossSum_ = 0.0;
    samples_ = 0;
    if (s_.gate != nullptr) {
      runEpochEmulated(epoch);
      return;
    }
    while (const auto claim = s_.queue.next()) runStep(epoch, claim->batch, claim->indices);
    s_.ssp.finish(rank_);
  }

  [[nodiscard]] double lossSum() const { return lossSum_; }
  [[nodiscard]] std::int64_t samples() const { return samples_; }
  [[nodiscard]] const std::vector<StepRecord>& records() const { return records_; }
  [[nodiscard]] const StalenessHistogram& staleness() const { return staleness_; }
  [[nodiscard]] std::vector<TraceEvent>& trace() { return trace_.events(); }

 private:
  void runStep(int epoch, std::int64_t step, std::span<const std::int64_t> batch) {
    const RunClock& clock = s_.clock;
    const std::int64_t globalStep = epoch * s_.batchesPerEpoch + step;
    const std::int64_t start = clock.nowNs();
    const std::int64_t sspWait = s_.ssp.waitTurn(rank_);
    const std::int64_t pullStart = clock.nowNs();
    const PullResult pulled = s_.server.pull(params_);
    const std::int64_t computeStart = clock.nowNs();
    checkParamsFinite(params_, s_.config, epoch, step);
    const std::int64_t throttled0 = throttle_.measuredNs();
    const std::int64_t cpu0 = threadCpuNs() - throttle_.spinCpuNs();
    const std::int64_t injected0 = throttle_.injectedNs();
    const StepLoss loss = step_.compute(params_, batch, grads_, clock, throttle_);
    checkLossFinite(loss.lossSum, s_.config, epoch, step, rank_);
    const std::int64_t pushStart = clock.nowNs();
    const PushResult pushed = s_.server.push(grads_, params_, pulled.version);
    const std::int64_t end = clock.nowNs();
    s_.ssp.advance(rank_);
    trace_.add("ssp wait", computeTrack(rank_), start, pullStart, globalStep);
    trace_.add("pull", commTrack(rank_), pullStart, computeStart, globalStep);
    trace_.add("forward+backward", computeTrack(rank_), computeStart, pushStart, globalStep);
    trace_.add("push", commTrack(rank_), pushStart, end, globalStep);

    StepRecord r;
    r.epoch = epoch;
    r.step = step;
    r.rank = rank_;
    r.startNs = start;
    r.endNs = end;
    r.computeNs = pushStart - computeStart;
    r.waitNs = sspWait + pulled.lockWaitNs + pushed.lockWaitNs;
    r.commBusyNs = (computeStart - pullStart) + (end - pushStart) - pulled.lockWaitNs - pushed.lockWaitNs;
    r.exposedCommNs = r.commBusyNs;  // pull and push block the worker: nothing overlaps them
    r.throttledNs = throttle_.measuredNs() - throttled0;
    r.injectedNs = throttle_.injectedNs() - injected0;
    r.deviceComputeNs = threadCpuNs() - throttle_.spinCpuNs() - cpu0 + r.injectedNs;
    r.lossSum = loss.lossSum;
    r.samples = loss.samples;
    r.staleness = pushed.staleness;
    records_.push_back(r);
    staleness_.add(pushed.staleness);
    lossSum_ += loss.lossSum;
    samples_ += loss.samples;
  }

  // The emulated device: the batch is claimed and the parameters pulled at this worker's turn on the
  // emulated clock; the push comes at pull time + real pull time + F x the modelled compute, again at
  // its turn; pull and push copies take their real time (communication real), the compute is modelled.
  void runEpochEmulated(int epoch) {
    VirtualGate& gate = *s_.gate;
    const RunClock& clock = s_.clock;
    for (;;) {
      const double t0 = gate.waitTurn(rank_);
      const auto claim = s_.queue.next();
      if (!claim) {
        gate.finish(rank_);
        return;
      }
      const std::int64_t pullStart = clock.nowNs();
      const PullResult pulled = s_.server.pull(params_);
      const std::int64_t computeStart = clock.nowNs();
      const double computeNs = factor_ * s_.modelledNs;
      const double pushAt = t0 + static_cast<double>(computeStart - pullStart) + computeNs;
      gate.declare(rank_, pushAt);
      checkParamsFinite(params_, s_.config, epoch, claim->batch);
      const StepLoss loss = step_.compute(params_, claim->indices, grads_, clock, throttle_);
      checkLossFinite(loss.lossSum, s_.config, epoch, claim->batch, rank_);
      gate.waitTurn(rank_);
      const std::int64_t pushStart = clock.nowNs();
      const PushResult pushed = s_.server.push(grads_, params_, pulled.version);
      const std::int64_t end = clock.nowNs();
      const double endV = pushAt + static_cast<double>(end - pushStart);
      gate.declare(rank_, endV);
      const std::int64_t globalStep = epoch * s_.batchesPerEpoch + claim->batch;
      trace_.add("pull", commTrack(rank_), pullStart, computeStart, globalStep);
      trace_.add("forward+backward", computeTrack(rank_), computeStart, pushStart, globalStep);
      trace_.add("push", commTrack(rank_), pushStart, end, globalStep);

      StepRecord r;
      r.epoch = epoch;
      r.step = claim->batch;
      r.rank = rank_;
      r.startNs = std::llround(t0);
      r.endNs = std::llround(endV);
      r.computeNs = std::llround(computeNs);
      r.commBusyNs = r.exposedCommNs = r.endNs - r.startNs - r.computeNs;  // the real pull and push
      r.throttledNs = factor_ != 1.0 ? std::llround(s_.modelledNs) : 0;
      r.injectedNs = factor_ != 1.0 ? std::llround((factor_ - 1.0) * s_.modelledNs) : 0;
      r.deviceComputeNs = r.computeNs;
      r.lossSum = loss.lossSum;
      r.samples = loss.samples;
      r.staleness = pushed.staleness;
      records_.push_back(r);
      staleness_.add(pushed.staleness);
      lossSum_ += loss.lossSum;
      samples_ += loss.samples;
    }
  }

  int rank_;
  const AsyncShared& s_;
  std::vector<float> params_;
  std::vector<float> grads_;
  GradientStep step_;
  ComputeThrottle throttle_;
  double factor_;  // the straggler's compute factor (applied on the emulated clock with --compute-model)
  TraceLog trace_;
  std::vector<StepRecord> records_;
  StalenessHistogram staleness_;
  double lossSum_ = 0.0;
  std::int64_t samples_ = 0;
};

}  // namespace

RunResult runAsync(const TrainConfig& config, const DataSplit& data, const EpochObserver& observe) {
  validate(config);
  const Mlp model{ParameterLayout(config.widths)};
  checkModelFitsData(model.layout(), data);
  std::vector<float> initial(static_cast<std::size_t>(model.layout().parameterCount()));
  model.initialize(initial, config.seed);
  ParameterServer server(std::move(initial), config.sgd, config.async.dcLambda, 1.0F / static_cast<float>(config.workers),
                         config.async.dcAdaptive);
  server.forceStaleness(config.async.forcedStaleness);
  SspClock ssp(config.workers, config.async.sspBound);
  const RunClock clock;
  // As many batches per epoch as sync's static shards hold, so the two modes see the same samples.
  const ShardPlan shards(data.train, config.workers, config.seed, config.remainder, config.shard);
  const std::int64_t batches = config.workers * stepsPerEpoch(config, shards.samplesPerReplica());
  BatchQueue queue;
  const auto prepareEpoch = [&](int epoch) {
    queue.reset(shards.queueOrder(epoch),
                config.workerBatch(), batches);
    ssp.reset();
  };
  prepareEpoch(0);
  AsyncShared shared{config, data, model, server, ssp, queue, clock, batches};
  std::unique_ptr<VirtualGate> gate;
  if (config.compute.active()) {
    gate = std::make_unique<VirtualGate>(config.workers);
    shared.gate = gate.get();
    const GradientUnits units(model.layout(), modelPreset("mlp"));
    shared.modelledNs =
        deviceCosts(units, config.compute, config.workerBatch() / config.microBatches, config.microBatches).stepComputeNs();
  }
  double epochStartV = 0.0, trainV = 0.0;

  std::vector<std::unique_ptr<AsyncWorker>> workers;
  for (int r = 0; r < config.workers; ++r) workers.push_back(std::make_unique<AsyncWorker>(r, shared));

  RunResult result;
  result.communicator = "parameter server in shared memory (" + std::to_string(config.workers) + " worker threads)";
  double trainS = 0.0;
  EpochRunnerHooks hooks;
  hooks.runEpoch = [&](int rank, int epoch) { workers[static_cast<std::size_t>(rank)]->runEpoch(epoch); };
  hooks.onEpochEnd = [&](int epoch, std::int64_t epochNs) {
    double lossSum = 0.0;
    std::int64_t samples = 0;
    for (const auto& w : workers) {
      lossSum += w->lossSum();
      samples += w->samples();
    }
    if (gate) {  // the emulated clock: the epoch ends when its last push does
      const double endV = gate->latest();
      epochNs = std::llround(endV - epochStartV);
      trainV += endV - epochStartV;
      epochStartV = endV;
      gate->startEpoch(endV);
    }
    trainS += static_cast<double>(epochNs) / kNsPerS;
    const EvalResult test = evaluate(model, server.snapshot(), data.test);
    result.epochs.push_back(makeEpochRecord(epoch, lossSum, samples, test, epochNs, trainS));
    if (observe) observe(result.epochs.back());
    checkEpochFinite(result.epochs.back(), config);
    if (epoch + 1 < config.epochs) prepareEpoch(epoch + 1);
  };
  hooks.onFailure = [&] {
    ssp.abort();
    if (gate) gate->abort();
  };
  result.trainTimeS = static_cast<double>(runEpochs(config.workers, config.epochs, clock, hooks)) / kNsPerS;
  result.wallTrainTimeS = result.trainTimeS;
  if (gate) result.trainTimeS = trainV / kNsPerS;
  result.finalParams = server.snapshot();
  if (config.async.sspBound >= 0) result.sspMaxGap = ssp.maxGap();
  for (auto& w : workers) {
    result.steps.insert(result.steps.end(), w->records().begin(), w->records().end());
    result.staleness.merge(w->staleness());
    result.trace.insert(result.trace.end(), w->trace().begin(), w->trace().end());
    for (const StepRecord& r : w->records()) result.samples += r.samples;
  }
  return result;
}

}  // namespace cclab::trainer
