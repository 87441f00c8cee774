#include "trainer/sync/sync_trainer.h"

#include <algorithm>
#include <cmath>
#include <array>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trainer/data/sampler.h"
#include "trainer/data/shards.h"
#include "trainer/device/virtual_timeline.h"
#include "trainer/metrics/gradient_stats.h"
#include "trainer/model/gradient_units.h"
#include "trainer/model/mlp.h"
#include "trainer/model/sgd.h"
#include "trainer/run/divergence.h"
#include "trainer/run/epoch_runner.h"
#include "trainer/run/gradient_step.h"
#include "trainer/run/processes.h"
#include "trainer/run/steps.h"
#include "trainer/sync/buckets.h"
#include "trainer/sync/comm_thread.h"
#include "trainer/sync/wait_attribution.h"

namespace cclab::trainer {
namespace {

constexpr int kRoot = 0;

// What every worker of one run shares (read-only during the run).
struct SyncShared {
  const TrainConfig& config;
  const DataSplit& data;
  const Mlp& model;
  const GradientUnits& units;  // the MLP's layers after the preset's synthetic tensors
  const std::vector<Bucket>& buckets;
  GradientExchange& exchange;
  const RunClock& clock;
  std::int64_t stepsPerEpoch;
  const ShardPlan& shards;  // --shard: which samples each worker gets
};

class SyncWorker {
 public:
  SyncWorker(int rank, const SyncShared& s)
      : rank_(rank), s_(s), params_(static_cast<std::size_t>(s.model.layout().parameterCount())),
        grads_(static_cast<std::size_t>(s.units.totalCount())), sgd_(s.config.sgd, s.model.layout().parameterCount()),
        step_(s.model, s.data.train, s.config.workerBatch(), s.config.microBatches),
        throttle_(s.config.straggler.rank == rank && !s.config.compute.active() ? s.config.straggler.computeFactor : 1.0), trace_(s.config.trace),
        comm_(s.exchange, rank, s.clock, s.config.trace) {}

  void runEpoch(int epoch) {
    if (epoch == 0) {
      if (rank_ == kRoot) s_.model.initialize(params_, s_.config.seed);
      s_.exchange.broadcast(rank_, params_, kRoot);
    }
    lossSum_ = 0.0;
    samples_ = 0;
    const std::vector<std::int64_t> shard = s_.shards.indices(rank_, epoch);
    const auto b = static_cast<std::size_t>(s_.config.workerBatch());
    for (std::int64_t i = 0; i < s_.stepsPerEpoch; ++i)
      runStep(epoch, i, std::span<const std::int64_t>(shard).subspan(static_cast<std::size_t>(i) * b, b));
  }

  [[nodiscard]] std::span<const float> params() const { return params_; }
  [[nodiscard]] double lossSum() const { return lossSum_; }
  [[nodiscard]] std::int64_t samples() const { return samples_; }
  std::vector<StepRecord>& records() { return records_; }
  void collectTrace(std::vector<TraceEvent>& out) {
    comm_.stop();
    out.insert(out.end(), trace_.events().begin(), trace_.events().end());
    out.insert(out.end(), comm_.trace().events().begin(), comm_.trace().events().end());
  }
  [[nodiscard]] const std::vector<BucketArrival>& arrivals() const { return comm_.arrivals(); }
  [[nodiscard]] std::int64_t reducedElements() const { return comm_.reducedElements(); }

 private:
  void runStep(int epoch, std::int64_t step, std::span<const std::int64_t> batch) {
    const RunClock& clock = s_.clock;
    const std::int64_t globalStep = epoch * s_.stepsPerEpoch + step;
    const std::int64_t start = clock.nowNs();
    std::size_t next = 0;
    comm_.beginStep(epoch, step);
    const std::int64_t throttled0 = throttle_.measuredNs();
    const std::int64_t cpu0 = threadCpuNs() - throttle_.spinCpuNs();
    const std::int64_t injected0 = throttle_.injectedNs();
    std::int64_t ready = -1;  // backward done: taken before the last bucket is handed over
    double ownSq = 0.0;  // |g_r|^2, bucket by bucket while the gradient is still this worker's own
    const auto submitReady = [&](int layer) {
      if (layer == 0 && ready < 0) ready = clock.nowNs();
      while (next < s_.buckets.size() && s_.buckets[next].firstLayer >= layer) {
        ownSq += mlpSquaredNorm(s_.buckets[next]);
        comm_.submit(s_.buckets[next++], grads_, globalStep);
      }
    };
    const int mlpUnit0 = s_.units.syntheticUnits();  // MLP layer l is unit mlpUnit0 + l
    const LayerDoneFn onLayerDone =
        s_.config.sync.overlap ? LayerDoneFn([&](int layer) { submitReady(mlpUnit0 + layer); }) : LayerDoneFn();
    const std::span<float> mlpGrads = std::span<float>(grads_).subspan(static_cast<std::size_t>(s_.units.syntheticCount()));
    const StepLoss loss = step_.compute(params_, batch, mlpGrads, clock, throttle_, onLayerDone);
    syntheticBackward(s_.config.sync.overlap ? LayerDoneFn(submitReady) : LayerDoneFn());
    submitReady(0);
    const std::int64_t busy = comm_.waitAll();
    checkSyntheticSums();
    const double sumSq = mlpSquaredNorm({0, 0, 0, static_cast<std::int64_t>(grads_.size())});
    const std::int64_t done = clock.nowNs();
    sgd_.step(params_, mlpGrads, 1.0F / static_cast<float>(s_.config.workers));
    checkParamsFinite(params_, s_.config, epoch, step);  // replicas agree: every worker stops here
    const std::int64_t end = clock.nowNs();
    trace_.add("forward+backward", computeTrack(rank_), start, ready, globalStep);
    trace_.add("wait for gradients", computeTrack(rank_), ready, done, globalStep);
    trace_.add("optimizer", computeTrack(rank_), done, end, globalStep);

    StepRecord r;
    r.epoch = epoch;
    r.step = step;
    r.rank = rank_;
    r.startNs = start;
    r.readyNs = ready;
    r.doneNs = done;
    r.endNs = end;
    r.computeNs = (ready - start) + (end - done);
    r.commBusyNs = busy;  // replaced by attributeSyncWaits from the arrivals
    r.throttledNs = throttle_.measuredNs() - throttled0;
    r.injectedNs = throttle_.injectedNs() - injected0;
    r.deviceComputeNs = threadCpuNs() - throttle_.spinCpuNs() - cpu0 + r.injectedNs;
    r.lossSum = loss.lossSum;
    r.samples = loss.samples;
    r.gradSqNorm = ownSq;
    r.sumGradSqNorm = sumSq;
    records_.push_back(r);
    lossSum_ += loss.lossSum;
    samples_ += loss.samples;
  }

  // The squared norm, in double, of the part of `b` that holds the implemented MLP's gradient (a
  // preset's synthetic tensors come first in the flat gradient and carry markers, not gradients).
  [[nodiscard]] double mlpSquaredNorm(const Bucket& b) const {
    const std::int64_t begin = std::max(b.offset, s_.units.syntheticCount());
    double sq = 0.0;
    for (std::int64_t i = begin; i < b.offset + b.count; ++i) {
      const double g = grads_[static_cast<std::size_t>(i)];
      sq += g * g;
    }
    return sq;
  }

  // The synthetic tensors' "backward" (model/synthetic.h), last unit first: each gradient is filled with
  // this rank's marker value, kSyntheticUnit x (rank + 1), which sums exactly over any number of ranks.
  // Without a compute model it costs only the fill; with one, its FLOPs are accounted (device/).
  static constexpr float kSyntheticUnit = 1.0F / 1024.0F;
  void syntheticBackward(const LayerDoneFn& onUnitDone) {
    for (int u = s_.units.syntheticUnits() - 1; u >= 0; --u) {
      const GradientUnit& unit = s_.units.unit(u);
      const std::int64_t t = s_.clock.nowNs();
      std::fill_n(grads_.begin() + unit.offset, unit.count, kSyntheticUnit * static_cast<float>(rank_ + 1));
      throttle_.pace(s_.clock, t);
      if (onUnitDone) onUnitDone(u);
    }
  }
  // The synthetic gradients went through the same allreduces as the real ones: each must now hold the
  // sum of every rank's marker (checked at both ends of every tensor, every step).
  void checkSyntheticSums() const {
    const int n = s_.config.workers;
    const float want = kSyntheticUnit * static_cast<float>(n * (n + 1) / 2);
    for (int u = 0; u < s_.units.syntheticUnits(); ++u) {
      const GradientUnit& unit = s_.units.unit(u);
      const auto at = [&](std::int64_t i) { return grads_[static_cast<std::size_t>(unit.offset + i)]; };
      if (at(0) != want || at(unit.count - 1) != want)
        throw Error("synthetic gradient " + unit.name + " was not allreduced: holds " + std::to_string(at(0)) +
                    ", expected " + std::to_string(want));
    }
  }

  int rank_;
  const SyncShared& s_;
  std::vector<float> params_;
  std::vector<float> grads_;
  Sgd sgd_;
  GradientStep step_;
  ComputeThrottle throttle_;
  TraceLog trace_;
  std::vector<StepRecord> records_;
  double lossSum_ = 0.0;
  std::int64_t samples_ = 0;
  CommThread comm_;  // last: its thread stops before the buffers it reduces go away
};

// Trace events cross processes by name (a name is a string literal, at another address in each process).
struct WireTraceEvent {
  std::array<char, 48> name;
  int track;
  std::int64_t startNs, durNs, step;
};

std::vector<TraceEvent> concatTrace(const ProcessGroup& group, const std::vector<TraceEvent>& mine) {
  if (!group.spansProcesses()) return mine;
  std::vector<WireTraceEvent> wire;
  for (const TraceEvent& e : mine) {
    WireTraceEvent w{};
    std::strncpy(w.name.data(), e.name, w.name.size() - 1);
    w.track = e.track;
    w.startNs = e.startNs;
    w.durNs = e.durNs;
    w.step = e.step;
    wire.push_back(w);
  }
  static std::set<std::string> names;  // stable storage for the names of the other processes' events
  std::vector<TraceEvent> all;
  for (const WireTraceEvent& w : group.concat(wire))
    all.push_back({names.insert(std::string(w.name.data())).first->c_str(), w.track, w.startNs, w.durNs, w.step});
  return all;
}

// What each process adds to an epoch's end: its ranks' training loss and samples and its epoch time;
// rank 0 also the test evaluation (of its replica; the replicas agree), which every process then uses,
// so a diverged run stops on every process at the same epoch.
struct EpochShare {
  double lossSum;
  std::int64_t samples;
  std::int64_t epochNs;
  EvalResult test;
};

}  // namespace

RunResult runSync(const TrainConfig& config, const DataSplit& data, Communicator& comm, const EpochObserver& observe) {
  validate(config);
  if (comm.nranks() != config.workers)
    throw InvalidArgument("communicator has " + std::to_string(comm.nranks()) + " ranks for " +
                          std::to_string(config.workers) + " workers");
  const Mlp model{ParameterLayout(config.widths)};
  checkModelFitsData(model.layout(), data);
  const GradientUnits units(model.layout(), modelPreset(config.model));
  const std::vector<Bucket> buckets = planBuckets(units, config.sync.firstBucketBytes, config.sync.bucketBytes);
  CollectiveOptions options;
  options.algorithm = config.sync.algorithm;
  GradientExchange exchange(comm, options, units.totalCount());
  const ProcessGroup group(comm);  // under mpirun: this process runs one rank, the others the rest
  const RunClock clock = group.commonClock();
  const ShardPlan shards(data.train, config.workers, config.seed, config.remainder, config.shard);
  const SyncShared shared{config, data, model, units, buckets, exchange, clock, stepsPerEpoch(config, shards.samplesPerReplica()),
                          shards};

  std::vector<std::unique_ptr<SyncWorker>> workers;
  for (int r : group.localRanks()) workers.push_back(std::make_unique<SyncWorker>(r, shared));
  const bool evaluates = group.localRanks().front() == kRoot;

  RunResult result;
  result.communicator = comm.description();
  result.rankLocations = comm.rankLocations();
  double trainS = 0.0;
  EpochRunnerHooks hooks;
  hooks.runEpoch = [&](int index, int epoch) { workers[static_cast<std::size_t>(index)]->runEpoch(epoch); };
  hooks.onEpochEnd = [&](int epoch, std::int64_t epochNs) {
    EpochShare mine{0.0, 0, epochNs, {}};
    for (const auto& w : workers) {
      mine.lossSum += w->lossSum();
      mine.samples += w->samples();
    }
    if (evaluates) mine.test = evaluate(model, workers.front()->params(), data.test);
    const std::vector<EpochShare> shares = group.concat(std::span<const EpochShare>(&mine, 1));
    double lossSum = 0.0;
    std::int64_t samples = 0;
    for (const EpochShare& e : shares) {  // in rank order: every process sums alike
      lossSum += e.lossSum;
      samples += e.samples;
      epochNs = std::max(epochNs, e.epochNs);  // the epoch ends when the last process ends it
    }
    trainS += static_cast<double>(epochNs) / kNsPerS;
    const EvalResult test = shares.front().test;
    result.epochs.push_back(makeEpochRecord(epoch, lossSum, samples, test, epochNs, trainS));
    if (observe) observe(result.epochs.back());
    checkEpochFinite(result.epochs.back(), config);
  };
  const std::int64_t trainNs = runEpochs(static_cast<int>(workers.size()), config.epochs, clock, hooks);

  // Every rank's records, in rank order, on every process (under mpirun through allgathers: the
  // report rank 0 writes holds every rank's figures).
  result.trainTimeS = static_cast<double>(trainNs) / kNsPerS;
  std::vector<TraceEvent> trace;
  std::vector<StepRecord> steps;
  std::vector<BucketArrival> arrivals;
  std::int64_t reduced = 0;
  for (auto& w : workers) {
    w->collectTrace(trace);
    steps.insert(steps.end(), w->records().begin(), w->records().end());
    arrivals.insert(arrivals.end(), w->arrivals().begin(), w->arrivals().end());
    reduced += w->reducedElements();
  }
  result.trace = concatTrace(group, trace);
  result.steps = group.concat(steps);
  fillGradientStats(result.steps, config.workers);
  result.arrivals = group.concat(arrivals);
  for (const std::int64_t n : group.concat(std::span<const std::int64_t>(&reduced, 1)))
    result.allreducedBytes += n * static_cast<std::int64_t>(sizeof(float));
  for (const StepRecord& r : result.steps) result.samples += r.samples;
  result.trainTimeS = comm.maxOverProcesses(result.trainTimeS);
  result.wallTrainTimeS = result.trainTimeS;
  if (config.compute.active()) {
    VirtualRun v{config.workers, config.sync.overlap, std::vector<double>(static_cast<std::size_t>(config.workers), 1.0)};
    if (config.straggler.rank >= 0) v.factor[static_cast<std::size_t>(config.straggler.rank)] = config.straggler.computeFactor;
    const DeviceCosts costs = deviceCosts(units, config.compute, config.workerBatch() / config.microBatches, config.microBatches);
    applyVirtualClock(result, costs, buckets, v);
  }
  attributeSyncWaits(result.steps, result.arrivals);
  // Rank 0's replica (sent to the other processes), and how far any replica is from it.
  const auto first = workers.front()->params();
  result.finalParams.assign(first.begin(), first.end());
  if (group.spansProcesses()) exchange.broadcast(group.localRanks().front(), result.finalParams, kRoot);
  const std::span<const float> root = result.finalParams;
  for (const auto& w : workers)
    for (std::size_t i = 0; i < root.size(); ++i)
      result.replicaDivergence = std::max(result.replicaDivergence, static_cast<double>(std::abs(w->params()[i] - root[i])));
  result.replicaDivergence = comm.maxOverProcesses(result.replicaDivergence);
  return result;
}

}  // namespace cclab::trainer
