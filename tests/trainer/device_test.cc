// The emulated device (--compute-model), real gradient sizes (--layers, --model presets) and their
// buckets: FLOP closed forms, preset sizes, accounted compute = FLOPs / rate, synthetic gradients
// allreduced like real ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/core/errors.h"
#include "test_util.h"
#include "trainer/device/compute_model.h"
#include "trainer/device/virtual_timeline.h"
#include "trainer/metrics/summary.h"
#include "trainer/model/gradient_units.h"
#include "trainer/model/synthetic.h"
#include "trainer/report/model_info.h"
#include "trainer/sync/buckets.h"
#include "trainer/sync/sync_trainer.h"
#include "trainer/async/async_trainer.h"

namespace cclab::trainer {
namespace {

using testing::tinyConfig;
using testing::tinyData;

TEST(Device, MlpFlopsAreTheClosedForm) {
  const ParameterLayout mlp({784, 4096, 4096, 10});
  const GradientUnits u(mlp, modelPreset("mlp"));
  const double a = 784.0 * 4096, b = 4096.0 * 4096, c = 4096.0 * 10;
  EXPECT_DOUBLE_EQ(u.forwardFlopsPerSample(), 2 * (a + b + c));  // 2 in out per sample
  EXPECT_DOUBLE_EQ(u.backwardFlopsPerSample(), 2 * a + 4 * (b + c));  // dW everywhere, dA but on the first layer
  const double params = (a + 4096) + (b + 4096) + (c + 10);
  EXPECT_EQ(u.totalCount(), static_cast<std::int64_t>(params));
  EXPECT_DOUBLE_EQ(u.updateFlops(), kSgdFlopsPerParameter * params);
  EXPECT_EQ(u.syntheticUnits(), 0);
}

TEST(Device, ResNet50PresetHasTheRealParameterAndTensorCounts) {
  const ModelPreset p = modelPreset("resnet50");
  EXPECT_EQ(p.parameterCount(), 25'557'032);  // torchvision's resnet50: 25,557,032 parameters
  EXPECT_EQ(p.tensors.size(), 161U);           // 53 conv + 53 x 2 batch norm + fc weight, bias
  // ~4.1 G multiply-adds per 224x224 image (He et al. 2016: 3.8 G without the v1.5 stride move), so
  // ~8.2 G FLOPs, plus the batch norms.
  EXPECT_GT(p.forwardFlopsPerSample(), 8.0e9);
  EXPECT_LT(p.forwardFlopsPerSample(), 8.5e9);
}

TEST(Device, BertBasePresetHasTheRealParameterAndTensorCounts) {
  const ModelPreset p = modelPreset("bert-base");
  EXPECT_EQ(p.parameterCount(), 109'482'240);  // BertModel bert-base-uncased: 109,482,240
  EXPECT_EQ(p.tensors.size(), 199U);            // 5 embedding + 12 x 16 encoder + 2 pooler
  // ~2 x 85 M encoder weights x 128 tokens + attention: 22-23 G FLOPs per sequence.
  EXPECT_GT(p.forwardFlopsPerSample(), 2.1e10);
  EXPECT_LT(p.forwardFlopsPerSample(), 2.4e10);
  EXPECT_THROW(modelPreset("gpt5"), InvalidArgument);
}

TEST(Device, BucketsFollowTheTensorsAndCoverTheGradient) {
  const ParameterLayout mlp({784, 256, 128, 10});
  const GradientUnits u(mlp, modelPreset("resnet50"));
  constexpr std::size_t kCap = 25ULL << 20, kFirst = 1ULL << 20;
  const std::vector<Bucket> buckets = planBuckets(u, kFirst, kCap);
  ASSERT_GE(buckets.size(), 3U);
  std::int64_t end = u.totalCount(), total = 0;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const Bucket& b = buckets[i];
    EXPECT_EQ(b.offset + b.count, end) << i;  // contiguous, in backward order
    EXPECT_EQ(b.offset, u.unit(b.firstLayer).offset) << i;  // whole tensors only
    const std::size_t cap = i == 0 ? kFirst : kCap;
    const auto bytes = static_cast<std::size_t>(b.count) * sizeof(float);
    const auto lastTensor = static_cast<std::size_t>(u.unit(b.firstLayer).count) * sizeof(float);
    if (i + 1 < buckets.size()) {
      EXPECT_GE(bytes, cap) << i;  // closed at the cap ...
    }
    EXPECT_LT(bytes - lastTensor, cap) << i;                 // ... by its last tensor
    end = b.offset;
    total += b.count;
  }
  EXPECT_EQ(end, 0);
  EXPECT_EQ(total, u.totalCount());
}

TEST(Device, ComputeModelsNameTheirRates) {
  EXPECT_DOUBLE_EQ(parseComputeModel("h100").flopsPerS, kH100Bf16DenseTflops * 1e12);
  EXPECT_DOUBLE_EQ(parseComputeModel("a100").flopsPerS, kA100Bf16DenseTflops * 1e12);
  EXPECT_DOUBLE_EQ(parseComputeModel("250.5").flopsPerS, 250.5e12);
  EXPECT_FALSE(parseComputeModel("h200").source.empty());
  EXPECT_FALSE(parseComputeModel("none").active());
  for (const char* bad : {"h1000", "0", "-1", "inf", "12x"}) EXPECT_THROW(parseComputeModel(bad), InvalidArgument) << bad;
}

// The accounted compute of every worker-step is FLOPs / rate (x the straggler's factor), to within
// the 1 ns rounding of each timestamp; wall time plays no part.
TEST(Device, AccountedComputeIsFlopsOverRate) {
  const DataSplit data = tinyData(512, 64);
  TrainConfig c = tinyConfig(Mode::Sync, 3, 48);
  c.epochs = 2;
  c.sync.firstBucketBytes = 64;  // several buckets
  // 1 MFLOP/s: modelled steps of ~0.1 s (virtual: the run takes real milliseconds), so compute
  // dominates this machine's real communication times of microseconds.
  c.compute = parseComputeModel("0.000001");
  c.straggler = {.rank = 2, .computeFactor = 1.4};
  auto comm = makeCommunicator(Backend::Host, {c.workers});
  const RunResult r = runSync(c, data, *comm);
  const ModelInfo m = describeModel(c);
  const double wantNs = m.stepFlopsPerWorker / 1e6 * 1e9;  // FLOPs / (1e6 FLOP/s), in ns
  ASSERT_FALSE(r.steps.empty());
  constexpr double kRoundingNs = 4.0;  // four rounded timestamps per step
  for (const StepRecord& s : r.steps) {
    const double f = s.rank == 2 ? 1.4 : 1.0;
    EXPECT_NEAR(static_cast<double>(s.computeNs), f * wantNs, kRoundingNs) << "rank " << s.rank;
    EXPECT_EQ(s.computeNs + s.waitNs + s.exposedCommNs, s.stepNs());
  }
  const Summary sum = summarize(r, c.workers);
  EXPECT_NEAR(sum.ranks.ranks[2].realisedFactor, 1.4, 1e-6);
  EXPECT_NEAR(sum.ranks.ranks[0].realisedFactor, 1.0, 1e-12);
  // The straggler arrives last at (nearly) every allreduce on the emulated clock, and the others wait.
  EXPECT_GT(sum.ranks.ranks[2].lastShare, 0.9);
  EXPECT_GT(sum.waitUs, 0.0);
  EXPECT_GT(r.wallTrainTimeS, 0.0);
}

// A preset's synthetic gradients go through the allreduces like the real ones: every rank hands the
// whole model's gradient to the collectives every step (and each step checks the sums; a wrong sum
// throws).
TEST(Device, SyntheticGradientsAreAllreducedLikeRealOnes) {
  const DataSplit data = tinyData(256, 32);
  TrainConfig c = tinyConfig(Mode::Sync, 2, 32);
  c.epochs = 1;
  c.maxStepsPerEpoch = 2;
  c.model = "resnet50";
  c.compute = parseComputeModel("h100");
  auto comm = makeCommunicator(Backend::Host, {c.workers});
  const RunResult r = runSync(c, data, *comm);
  const ModelInfo m = describeModel(c);
  EXPECT_EQ(m.syntheticTensors, 161);
  EXPECT_EQ(m.gradientBytes, 4 * (25'557'032 + ParameterLayout(c.widths).parameterCount()));
  const auto workerSteps = static_cast<std::int64_t>(r.steps.size());
  ASSERT_EQ(workerSteps, 2 * 2);
  EXPECT_EQ(r.allreducedBytes, workerSteps * m.gradientBytes);
}

TEST(Device, PresetsAreSyncOnlyAndAsyncEmulationRefusesSsp) {
  TrainConfig c = tinyConfig(Mode::Async, 2, 32);
  c.compute = parseComputeModel("h100");
  EXPECT_NO_THROW(validate(c));
  c.async.sspBound = 2;
  EXPECT_THROW(validate(c), InvalidArgument);
  c.async.sspBound = -1;
  c.compute = {};
  c.model = "bert-base";
  EXPECT_THROW(validate(c), InvalidArgument);
}

// Async on the emulated device: pushes in emulated-clock order, compute FLOPs / rate, the run timed on
// the emulated clock; a straggler at factor F makes 1/F as many pushes.
TEST(Device, AsyncOnTheEmulatedDeviceFollowsTheEmulatedClock) {
  const DataSplit data = tinyData(1024, 64);
  TrainConfig c = tinyConfig(Mode::Async, 3, 48);
  c.epochs = 1;
  c.compute = parseComputeModel("0.000001");  // compute (~10 ms modelled) >> the real pull and push copies
  const RunResult r = runAsync(c, data);
  const double wantNs = describeModel(c).stepFlopsPerWorker / 1e6 * 1e9;
  ASSERT_GT(r.staleness.total(), 9);
  std::vector<std::int64_t> pushes(3, 0);
  for (const StepRecord& s : r.steps) {
    EXPECT_NEAR(static_cast<double>(s.computeNs), wantNs, 1.0);
    EXPECT_EQ(s.computeNs + s.waitNs + s.exposedCommNs, s.stepNs());
    ++pushes[static_cast<std::size_t>(s.rank)];
  }
  // Each pull-to-push interval is one modelled step long, so it holds about one push of each other
  // worker: between 1 and workers - 1 = 2 (equal workers run nearly in lock-step; whether another's push
  // falls between a worker's own push and its next pull is decided by the real, microsecond copy times).
  double staleness = 0.0;
  for (const StepRecord& s : r.steps) staleness += static_cast<double>(s.staleness);
  staleness /= static_cast<double>(r.steps.size());
  EXPECT_GE(staleness, 0.9);
  EXPECT_LE(staleness, 2.1);
  // The run is timed on the emulated clock: each worker's pushes follow each other one modelled step
  // (plus its real copies) apart, so the epoch lasts at least the busiest worker's steps x the step.
  const auto most = *std::max_element(pushes.begin(), pushes.end());
  EXPECT_GE(r.trainTimeS * 1e9, static_cast<double>(most) * wantNs);
  EXPECT_LT(r.trainTimeS * 1e9, static_cast<double>(most + 1) * wantNs * 1.1);
  EXPECT_LT(r.wallTrainTimeS, r.trainTimeS);
  EXPECT_LE(*std::max_element(pushes.begin(), pushes.end()) - *std::min_element(pushes.begin(), pushes.end()), 1);
  c.straggler = {.rank = 0, .computeFactor = 2.0};
  const RunResult s = runAsync(c, data);
  std::vector<std::int64_t> p(3, 0);
  for (const StepRecord& x : s.steps) ++p[static_cast<std::size_t>(x.rank)];
  EXPECT_LT(p[0], p[1]);  // half the speed: about half the pushes
  EXPECT_NEAR(static_cast<double>(p[0]) / static_cast<double>(p[1]), 0.5, 0.2);
}

}  // namespace
}  // namespace cclab::trainer
