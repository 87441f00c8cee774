#include "trainer/cublas/device_sync.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "collectives/core/errors.h"
#include "trainer/cublas/cublas_runner.h"
#include "trainer/cublas/device_mlp.h"
#include "trainer/data/batch.h"
#include "trainer/data/sampler.h"
#include "trainer/data/shards.h"
#include "trainer/model/evaluate.h"
#include "trainer/run/divergence.h"
#include "trainer/run/epoch_runner.h"
#include "trainer/run/steps.h"
#include "trainer/sync/buckets.h"

namespace cclab::trainer::cublas {
namespace {

constexpr int kRoot = 0;

struct Shared {
  const TrainConfig& config;
  const DataSplit& data;
  const Mlp& model;
  const std::vector<Bucket>& buckets;
  Communicator& comm;
  CollectiveOptions options;
  const RunClock& clock;
  std::int64_t stepsPerEpoch;
};

class DeviceWorker {
 public:
  DeviceWorker(int rank, const Shared& s, std::unique_ptr<OpRunner> runner)
      : rank_(rank), s_(s), microBatch_(s.config.workerBatch() / s.config.microBatches),
        slowdown_(s.config.straggler.rank == rank ? s.config.straggler.computeFactor : 1.0),
        mlp_(std::move(runner), s.model.layout(), microBatch_, s.config.microBatches,
             1.0F / static_cast<float>(s.config.workers), s.config.sgd),
        shards_(s.data.train, s.config.workers, s.config.seed, s.config.remainder, s.config.shard),
        x_(static_cast<std::size_t>(microBatch_ * s.model.layout().inputs())), y_(static_cast<std::size_t>(microBatch_)),
        host_(static_cast<std::size_t>(s.model.layout().parameterCount())) {}

  void runEpoch(int epoch) {
    if (epoch == 0) {
      if (rank_ == kRoot) {
        s_.model.initialize(host_, s_.config.seed);
        mlp_.uploadParams(host_);
      }
      CollectiveOptions o = s_.options;
      o.algorithm = plan::Algorithm::Auto;  // the allreduce's algorithm may have no broadcast form
      mlp_.handOff();
      s_.comm.broadcast(rank_, mlp_.params(), mlp_.params(), mlp_.parameterCount(), DataType::Float32, kRoot, o);
      mlp_.collectiveEnqueued();
      mlp_.join();
    }
    lossSum_ = 0.0;
    samples_ = 0;
    const std::vector<std::int64_t> shard = shards_.indices(rank_, epoch);
    const auto b = static_cast<std::size_t>(s_.config.workerBatch());
    for (std::int64_t i = 0; i < s_.stepsPerEpoch; ++i)
      runStep(epoch, i, std::span<const std::int64_t>(shard).subspan(static_cast<std::size_t>(i) * b, b));
    mlp_.downloadParams(host_);  // for the evaluation at the epoch's end
    checkParamsFinite(host_, s_.config, epoch, s_.stepsPerEpoch - 1);
  }

  [[nodiscard]] std::span<const float> params() const { return host_; }
  [[nodiscard]] double lossSum() const { return lossSum_; }
  [[nodiscard]] std::int64_t samples() const { return samples_; }
  [[nodiscard]] std::int64_t reducedElements() const { return reduced_; }
  [[nodiscard]] std::string runnerName() { return mlp_.runner().description(); }
  std::vector<StepRecord>& records() { return records_; }

 private:
  // --straggler on the device: after each micro-batch's forward the compute stream idles for its share
  // of (factor - 1) x this rank's compute in the step before (none in the first step, which has no
  // measure yet), so the backward and every bucket's allreduce start that much later, as on a device
  // that is `factor` times slower. Returns the delay enqueued.
  std::int64_t slowDown(int microBatches) {
    if (slowdown_ <= 1.0 || baseComputeNs_ == 0) return 0;
    const auto ns = static_cast<std::int64_t>((slowdown_ - 1.0) * static_cast<double>(baseComputeNs_) / microBatches);
    mlp_.runner().delay(ns);
    return ns;
  }

  // Enqueues the allreduce of every bucket whose lowest layer is >= layer (in bucket order).
  void submitReady(int layer) {
    while (next_ < s_.buckets.size() && s_.buckets[next_].firstLayer >= layer) {
      const Bucket& bk = s_.buckets[next_++];
      if (s_.config.workers == 1) continue;
      float* g = mlp_.grads() + bk.offset;
      mlp_.handOff();  // after the backward that produced the bucket; the next layers' overlap it
      s_.comm.allReduce(rank_, g, g, bk.count, DataType::Float32, ReduceOp::Sum, s_.options);
      mlp_.collectiveEnqueued();
      reduced_ += bk.count;
    }
  }

  void runStep(int epoch, std::int64_t step, std::span<const std::int64_t> batch) {
    const std::int64_t start = s_.clock.nowNs();
    std::int64_t injected = 0;
    next_ = 0;
    mlp_.beginStep();
    const int k = s_.config.microBatches;
    for (int m = 0; m < k; ++m) {
      gatherBatch(s_.data.train, batch.subspan(static_cast<std::size_t>(m * microBatch_), static_cast<std::size_t>(microBatch_)),
                  x_, y_);
      mlp_.forward(m, x_, y_);
      injected += slowDown(k);
      const bool overlap = m + 1 == k && s_.config.sync.overlap;
      mlp_.backward(overlap ? LayerDoneFn([this](int l) { submitReady(l); }) : LayerDoneFn());
    }
    submitReady(0);
    const std::int64_t enqueued = s_.clock.nowNs();
    mlp_.join();  // the update waits for every bucket's allreduce
    mlp_.sgd();
    const StepLoss loss = mlp_.finishStep();  // this rank's two streams only
    checkLossFinite(loss.lossSum, s_.config, epoch, step, rank_);
    StepRecord r;
    r.epoch = epoch;
    r.step = step;
    r.rank = rank_;
    r.startNs = start;
    r.readyNs = enqueued;
    r.doneNs = r.endNs = s_.clock.nowNs();
    // The split is the runner's (device time on the cuBLAS path): compute = the compute stream's step
    // less its wait for the collectives (exposed communication, peers' lateness included: the device
    // cannot tell them apart); busy = the collectives on the communication stream, overlapped = busy
    // less exposed. The step itself is the host's wall time (startNs..endNs).
    const StepTimes& t = mlp_.stepTimes();
    r.exposedCommNs = t.exposedNs;
    r.computeNs = r.deviceComputeNs = std::max<std::int64_t>(0, t.stepNs - t.exposedNs);
    r.injectedNs = injected;  // part of computeNs: the stream was busy with the delay
    baseComputeNs_ = std::max<std::int64_t>(0, r.computeNs - injected);
    if (slowdown_ > 1.0) r.throttledNs = baseComputeNs_;  // the report's realised factor: (throttled + injected) / throttled
    r.commBusyNs = t.commNs;
    r.overlappedNs = std::max<std::int64_t>(0, t.commNs - t.exposedNs);
    r.lossSum = loss.lossSum;
    r.samples = loss.samples;
    records_.push_back(r);
    lossSum_ += loss.lossSum;
    samples_ += loss.samples;
  }

  int rank_;
  const Shared& s_;
  std::int64_t microBatch_;
  double slowdown_;               // --straggler's compute factor on this rank, else 1
  std::int64_t baseComputeNs_ = 0;  // the last step's compute without the injected delay
  DeviceMlp mlp_;
  ShardPlan shards_;
  std::vector<float> x_;
  std::vector<int> y_;
  std::vector<float> host_;
  std::vector<StepRecord> records_;
  std::size_t next_ = 0;
  double lossSum_ = 0.0;
  std::int64_t samples_ = 0;
  std::int64_t reduced_ = 0;
};

}  // namespace

void checkDeviceConfig(const TrainConfig& config) {
  const auto refuse = [](const std::string& what) {
    throw InvalidArgument("--backend cuda computes the MLP on the device, which has no " + what + " yet");
  };
  if (config.model != "mlp") refuse("--model presets (synthetic tensors)");
  if (config.compute.active()) refuse("--compute-model (it is a real device)");
  if (config.trace) refuse("--trace timeline");
}

RunResult runSyncOnDevice(const TrainConfig& config, const DataSplit& data, Communicator& comm,
                          const RunnerFactory& makeRunner, const EpochObserver& observe) {
  validate(config);
  checkDeviceConfig(config);
  if (comm.nranks() != config.workers)
    throw InvalidArgument("communicator has " + std::to_string(comm.nranks()) + " ranks for " +
                          std::to_string(config.workers) + " workers");
  const Mlp model{ParameterLayout(config.widths)};
  checkModelFitsData(model.layout(), data);
  const std::vector<Bucket> buckets = planBuckets(model.layout(), config.sync.firstBucketBytes, config.sync.bucketBytes);
  const RunClock clock;
  const DistributedSampler probe(data.train.size(), config.workers, 0, config.seed, config.remainder);
  CollectiveOptions options;
  options.algorithm = config.sync.algorithm;
  const Shared shared{config, data, model, buckets, comm, options, clock, stepsPerEpoch(config, probe.samplesPerReplica())};
  const RegionSizes sizes = regionSizes(model.layout(), config.workerBatch() / config.microBatches, config.microBatches);

  std::vector<std::unique_ptr<DeviceWorker>> workers;
  for (int r = 0; r < config.workers; ++r) workers.push_back(std::make_unique<DeviceWorker>(r, shared, makeRunner(r, sizes)));

  RunResult result;
  result.communicator = comm.description() + "; model on the device: " + workers.front()->runnerName();
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
    trainS += static_cast<double>(epochNs) / kNsPerS;
    const EvalResult test = evaluate(model, workers.front()->params(), data.test);
    result.epochs.push_back(makeEpochRecord(epoch, lossSum, samples, test, epochNs, trainS));
    if (observe) observe(result.epochs.back());
    checkEpochFinite(result.epochs.back(), config);
  };
  const std::int64_t trainNs = runEpochs(config.workers, config.epochs, clock, hooks);
  result.trainTimeS = result.wallTrainTimeS = static_cast<double>(trainNs) / kNsPerS;
  for (auto& w : workers) {
    result.steps.insert(result.steps.end(), w->records().begin(), w->records().end());
    for (const StepRecord& r : w->records()) result.samples += r.samples;
    result.allreducedBytes += w->reducedElements() * static_cast<std::int64_t>(sizeof(float));
  }
  const auto root = workers.front()->params();
  result.finalParams.assign(root.begin(), root.end());
  for (const auto& w : workers)
    for (std::size_t i = 0; i < root.size(); ++i)
      result.replicaDivergence = std::max(result.replicaDivergence, static_cast<double>(std::abs(w->params()[i] - root[i])));
  return result;
}

RunResult runSyncOnCublas(const TrainConfig& config, const DataSplit& data, Communicator& comm,
                          const EpochObserver& observe) {
  checkDeviceConfig(config);
  std::string why;
  if (!cublasAvailable(&why)) throw InvalidArgument("cuda backend: the cuBLAS compute path is unavailable: " + why);
  return runSyncOnDevice(
      config, data, comm, [&comm](int rank, const RegionSizes& sizes) { return makeCublasRunner(comm, rank, sizes); },
      observe);
}

}  // namespace cclab::trainer::cublas
