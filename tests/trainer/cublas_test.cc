// The cuBLAS path's host logic, on the CPU: the GEMM program (column-major descriptors) interpreted
// by the CPU reference reproduces the CPU Mlp's forward and backward; the elementwise twins reproduce
// Sgd and softmaxCrossEntropy; bounds checks catch an op that would read outside its region; and the
// device training loop (in-place bucket allreduces, per-rank synchronize) run with the CPU reference
// on the host backend trains as runSync does. Random, non-power-of-two sizes throughout.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/core/errors.h"
#include "test_util.h"
#include "trainer/cublas/device_mlp.h"
#include "trainer/cublas/device_sync.h"
#include "trainer/cublas/elementwise.h"
#include "trainer/cublas/gemm_program.h"
#include "trainer/cublas/interpret.h"
#include "trainer/model/loss.h"
#include "trainer/model/mlp.h"
#include "trainer/model/sgd.h"
#include "trainer/sync/sync_trainer.h"

namespace cclab::trainer::cublas {
namespace {

using trainer::testing::maxAbsDiff;
using trainer::testing::tinyConfig;
using trainer::testing::tinyData;

std::vector<float> randomVector(std::size_t n, std::uint64_t seed, float lo = -1.0F, float hi = 1.0F) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Largest |a - b| relative to max(1, |b|): float GEMMs against the double-accumulating reference.
double maxRelDiff(std::span<const float> a, std::span<const float> b) {
  double m = a.size() == b.size() ? 0.0 : INFINITY;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, std::abs(static_cast<double>(a[i]) - b[i]) / std::max(1.0, std::abs(static_cast<double>(b[i]))));
  return m;
}

template <class T>
std::span<T> regionSpan(OpRunner& r, Region region, int index, std::int64_t n) {
  return {static_cast<T*>(r.region(region, index)), static_cast<std::size_t>(n)};
}

struct Shape {
  std::vector<std::int64_t> widths;
  std::int64_t batch;
};
const Shape kShapes[] = {{{37, 23, 19, 7}, 13}, {{11, 5}, 1}, {{29, 61, 3, 31, 10}, 17}, {{3, 97, 6}, 5}};

TEST(CublasProgram, InterpretedForwardAndBackwardMatchTheCpuMlp) {
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(formatWidths(shape.widths) + " batch " + std::to_string(shape.batch));
    const ParameterLayout layout(shape.widths);
    const Mlp mlp(layout);
    const std::int64_t b = shape.batch;
    std::vector<float> params(static_cast<std::size_t>(layout.parameterCount()));
    mlp.initialize(params, 5);
    // Non-zero biases, so BiasRows is exercised.
    const auto noise = randomVector(params.size(), 9, -0.1F, 0.1F);
    for (int l = 0; l < layout.layerCount(); ++l)
      for (std::int64_t j = 0; j < layout.layer(l).out; ++j) params[static_cast<std::size_t>(layout.layer(l).biasOffset + j)] = noise[static_cast<std::size_t>(j)];
    const auto x = randomVector(static_cast<std::size_t>(b * layout.inputs()), 11);
    std::vector<int> y(static_cast<std::size_t>(b));
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int>((i * 7 + 3) % static_cast<std::size_t>(layout.classes()));
    const float scale = 1.0F / static_cast<float>(b);

    // The CPU Mlp: forward, loss, backward into grads that already hold something (accumulation).
    MlpWorkspace ws(layout, b);
    std::copy(x.begin(), x.end(), ws.input().begin());
    const auto logits = mlp.forward(params, b, ws);
    const std::vector<float> cpuLogits(logits.begin(), logits.end());
    const LossResult cpuLoss = softmaxCrossEntropy(logits, y, layout.classes(), scale, mlp.logitGradient(ws));
    const auto prior = randomVector(params.size(), 13, -0.01F, 0.01F);
    std::vector<float> cpuGrads = prior;
    std::vector<int> cpuOrder;
    mlp.backward(params, b, ws, cpuGrads, [&](int l) { cpuOrder.push_back(l); });

    // The same through the program and the CPU reference runner.
    const RegionSizes sizes = regionSizes(layout, b);
    auto runner = makeHostRunner(sizes);
    DeviceMlp dev(std::move(runner), layout, b, 1, 1.0F, SgdConfig{});
    dev.uploadParams(params);
    dev.beginStep();
    std::copy(prior.begin(), prior.end(), dev.grads());
    dev.forward(0, x, y);
    const auto devLogits = regionSpan<float>(dev.runner(), Region::Activation, layout.layerCount(), b * layout.classes());
    EXPECT_LT(maxRelDiff(devLogits, cpuLogits), 1e-5);
    std::vector<int> order;
    dev.backward([&](int l) { order.push_back(l); });
    EXPECT_EQ(order, cpuOrder);
    const StepLoss loss = dev.finishStep();
    EXPECT_NEAR(loss.lossSum, cpuLoss.lossSum, 1e-5 * std::max(1.0, cpuLoss.lossSum));
    EXPECT_EQ(loss.samples, b);
    const auto correct = regionSpan<int>(dev.runner(), Region::Correct, 0, b);
    EXPECT_EQ(std::accumulate(correct.begin(), correct.end(), std::int64_t{0}), cpuLoss.correct);
    EXPECT_LT(maxRelDiff(std::span<const float>(dev.grads(), params.size()), cpuGrads), 1e-5);
    // The gradients changed from the prior everywhere the CPU's did (the comparison is not vacuous).
    EXPECT_GT(maxAbsDiff(cpuGrads, prior), 1e-4);
  }
}

TEST(CublasProgram, GemmDescriptorsAreColumnMajorTransposesOfTheRowMajorLayers) {
  const ParameterLayout layout({37, 23, 19, 7});
  const StepProgram p = buildStepProgram(layout, 13, 1.0F / 13, 0.25F, SgdConfig{});
  const LayerSlice& s = layout.layer(1);  // 23 -> 19
  const Op& fwd = p.forward[4];            // layer 1: BiasRows, Gemm, Relu
  ASSERT_EQ(fwd.kind, OpKind::Gemm);
  EXPECT_TRUE(fwd.transA);
  EXPECT_FALSE(fwd.transB);
  EXPECT_EQ(std::vector<std::int64_t>({fwd.m, fwd.n, fwd.k, fwd.a.ld, fwd.b.ld, fwd.c.ld}),
            std::vector<std::int64_t>({s.out, 13, s.in, s.in, s.in, s.out}));
  EXPECT_EQ(fwd.a.offset, s.weightOffset);
  EXPECT_EQ(fwd.beta, 1.0F);
  const Op& dw = p.backward[1][0];
  EXPECT_FALSE(dw.transA);
  EXPECT_TRUE(dw.transB);
  EXPECT_EQ(std::vector<std::int64_t>({dw.m, dw.n, dw.k, dw.c.ld}), std::vector<std::int64_t>({s.in, s.out, 13, s.in}));
  EXPECT_EQ(dw.c.region, Region::Grads);
  EXPECT_EQ(p.backward[0].size(), 2U);  // the first layer computes no input gradient
  EXPECT_EQ(p.backward[1].size(), 4U);
  EXPECT_EQ(p.sgd.front().alpha, 0.25F);
  EXPECT_NO_THROW(checkProgram(p, regionSizes(layout, 13)));
}

TEST(CublasProgram, BoundsCheckRefusesAnOpReachingOutsideItsRegion) {
  const ParameterLayout layout({37, 23, 19, 7});
  const StepProgram p = buildStepProgram(layout, 13, 1.0F / 13, 1.0F, SgdConfig{});
  EXPECT_THROW(checkProgram(p, regionSizes(layout, 12)), InvalidArgument);  // batch 13 > 12 rows
  Op last = p.forward[p.forward.size() - 1];
  last.c.offset += 1;
  EXPECT_THROW(checkOp(last, regionSizes(layout, 13)), InvalidArgument);
  Op ld = p.forward[1];
  ld.b.ld = ld.k - 1;  // a leading dimension below the rows it strides over
  EXPECT_THROW(checkOp(ld, regionSizes(layout, 13)), InvalidArgument);
  Op index = p.loss.front();
  index.c.index = 2;  // there are two delta buffers
  EXPECT_THROW(checkOp(index, regionSizes(layout, 13)), InvalidArgument);
  HostRegions regions(regionSizes(layout, 13));
  EXPECT_THROW(interpret(last, regions), InvalidArgument);  // the interpreter checks before running
}

TEST(CublasElementwise, SgdTwinEqualsSgdStepBitForBit) {
  const std::size_t n = 1009;
  const SgdConfig cfg{0.037F, 0.83F, 3e-4F};
  const float scale = 1.0F / 3.0F;
  auto w1 = randomVector(n, 1);
  auto w2 = w1;
  std::vector<float> v(n);
  Sgd sgd(cfg, static_cast<std::int64_t>(n));
  const ParameterLayout layout({1008, 1});  // parameterCount 1009
  HostRegions regions(regionSizes(layout, 1));
  Op op = buildStepProgram(layout, 1, 1.0F, scale, cfg).sgd.front();
  for (int step = 0; step < 3; ++step) {
    const auto g = randomVector(n, 100 + static_cast<std::uint64_t>(step));
    sgd.step(w1, g, scale);
    std::copy(g.begin(), g.end(), static_cast<float*>(regions.at(Region::Grads, 0)));
    std::copy(w2.begin(), w2.end(), static_cast<float*>(regions.at(Region::Params, 0)));
    interpret(op, regions);
    std::copy_n(static_cast<float*>(regions.at(Region::Params, 0)), n, w2.begin());
  }
  EXPECT_EQ(w1, w2);
  EXPECT_GT(maxAbsDiff(w1, randomVector(n, 1)), 1e-3);  // it moved
}

TEST(CublasElementwise, SoftmaxTwinEqualsTheCpuLossBitForBit) {
  const std::int64_t classes = 13, batch = 7;
  const auto z = randomVector(static_cast<std::size_t>(classes * batch), 3, -5.0F, 5.0F);
  std::vector<int> y{0, 12, 5, 5, 7, 1, 11};
  std::vector<float> gCpu(z.size()), gTwin(z.size());
  const LossResult cpu = softmaxCrossEntropy(z, y, classes, 0.125F, gCpu);
  double loss = 0.0;
  std::int64_t correct = 0;
  for (std::int64_t j = 0; j < batch; ++j) {
    const XentRow r = softmaxXentRow(z.data() + j * classes, classes, y[static_cast<std::size_t>(j)], 0.125F, gTwin.data() + j * classes);
    loss += r.loss;
    correct += r.correct;
  }
  EXPECT_EQ(gTwin, gCpu);
  EXPECT_DOUBLE_EQ(loss, cpu.lossSum);
  EXPECT_EQ(correct, cpu.correct);
}

TEST(CublasElementwise, BiasGradAndReluTwinsFollowTheCpuOrder) {
  const std::int64_t m = 9, n = 21;
  const auto dz = randomVector(static_cast<std::size_t>(m * n), 4);
  for (std::int64_t i = 0; i < m; ++i) {
    float want = 0.5F;
    for (std::int64_t j = 0; j < n; ++j) want += dz[static_cast<std::size_t>(i + j * m)];
    EXPECT_EQ(biasGradRow(0.5F, dz.data(), i, n, m), want);
  }
  EXPECT_EQ(reluOf(-0.0F), 0.0F);
  EXPECT_EQ(reluOf(2.5F), 2.5F);
  EXPECT_EQ(reluMasked(3.0F, 0.0F), 0.0F);  // the CPU Mlp masks where a <= 0
  EXPECT_EQ(reluMasked(3.0F, 1e-30F), 3.0F);
}

// The device loop on the CPU: the CPU reference runner on the host backend, against runSync.
RunResult runDeviceLoopOnHost(const TrainConfig& c, const DataSplit& data) {
  const auto comm = makeCommunicator(Backend::Host, CommConfig{.nranks = c.workers});
  return runSyncOnDevice(c, data, *comm, [](int, const RegionSizes& s) { return makeHostRunner(s); });
}

TEST(CublasDeviceLoop, TrainsAsRunSyncWithInPlaceBuckets) {
  const DataSplit data = tinyData(600, 90);
  for (int workers : {1, 3}) {
    TrainConfig c = tinyConfig(Mode::Sync, workers, 45);
    c.widths = {trainer::testing::kFeatures, 17, 11, trainer::testing::kClasses};
    c.sync.firstBucketBytes = 300;  // several buckets: the allreduces interleave with the backward
    c.sync.bucketBytes = 700;
    c.maxStepsPerEpoch = 5;
    SCOPED_TRACE("workers " + std::to_string(workers));
    const auto comm = makeCommunicator(Backend::Host, CommConfig{.nranks = workers});
    const RunResult cpu = runSync(c, data, *comm);
    const RunResult dev = runDeviceLoopOnHost(c, data);
    ASSERT_EQ(dev.finalParams.size(), cpu.finalParams.size());
    EXPECT_LT(maxAbsDiff(dev.finalParams, cpu.finalParams), 2e-5);
    EXPECT_EQ(dev.replicaDivergence, 0.0);
    ASSERT_EQ(dev.epochs.size(), cpu.epochs.size());
    EXPECT_NEAR(dev.epochs.back().trainLoss, cpu.epochs.back().trainLoss, 1e-5);
    EXPECT_EQ(dev.allreducedBytes, cpu.allreducedBytes);
    EXPECT_EQ(dev.steps.size(), cpu.steps.size());
    EXPECT_GT(maxAbsDiff(dev.finalParams, std::vector<float>(dev.finalParams.size())), 1e-3);
  }
}

TEST(CublasDeviceLoop, StepRecordsSplitTheStepIntoComputeAndCommunication) {
  const DataSplit data = tinyData(600, 90);
  for (int workers : {1, 3}) {
    TrainConfig c = tinyConfig(Mode::Sync, workers, 45);
    c.sync.firstBucketBytes = 300;
    c.maxStepsPerEpoch = 3;
    const RunResult dev = runDeviceLoopOnHost(c, data);
    ASSERT_EQ(dev.steps.size(), static_cast<std::size_t>(workers * 3 * c.epochs));
    for (const StepRecord& r : dev.steps) {
      // The runner's step lies inside the host's; on the CPU reference nothing overlaps.
      EXPECT_LE(r.computeNs + r.exposedCommNs, r.stepNs());
      EXPECT_GT(r.computeNs, 0);
      EXPECT_EQ(r.overlappedNs, 0);
      EXPECT_EQ(r.exposedCommNs, r.commBusyNs);
      if (workers == 1) {
        EXPECT_EQ(r.commBusyNs, 0);
      } else {
        EXPECT_GT(r.commBusyNs, 0);
      }
    }
  }
}

TEST(CublasDeviceLoop, MicroBatchesAndNoOverlapMatchRunSync) {
  const DataSplit data = tinyData(600, 90);
  TrainConfig c = tinyConfig(Mode::Sync, 2, 42);
  c.microBatches = 3;
  c.sync.overlap = false;
  c.sync.firstBucketBytes = 256;
  c.maxStepsPerEpoch = 4;
  const auto comm = makeCommunicator(Backend::Host, CommConfig{.nranks = 2});
  const RunResult cpu = runSync(c, data, *comm);
  const RunResult dev = runDeviceLoopOnHost(c, data);
  EXPECT_LT(maxAbsDiff(dev.finalParams, cpu.finalParams), 2e-5);
}

TEST(CublasDeviceLoop, RefusesWhatTheDevicePathDoesNotDo) {
  const DataSplit data = tinyData(600, 90);
  TrainConfig c = tinyConfig(Mode::Sync, 2, 40);
  TrainConfig preset = c;
  preset.model = "resnet50";
  EXPECT_THROW(runDeviceLoopOnHost(preset, data), InvalidArgument);
  TrainConfig trace = c;
  trace.trace = true;
  EXPECT_THROW(runDeviceLoopOnHost(trace, data), InvalidArgument);
}

TEST(CublasDeviceLoop, StragglerDelaysItsRankByTheFactorAndChangesNoNumber) {
  const DataSplit data = tinyData(600, 90);
  TrainConfig c = tinyConfig(Mode::Sync, 3, 42);
  c.microBatches = 2;
  c.maxStepsPerEpoch = 4;
  TrainConfig slow = c;
  slow.straggler.rank = 1;
  slow.straggler.computeFactor = 2.5;
  const RunResult plain = runDeviceLoopOnHost(c, data);
  const RunResult dev = runDeviceLoopOnHost(slow, data);
  EXPECT_EQ(dev.finalParams, plain.finalParams);  // a delay, never a different computation
  std::vector<const StepRecord*> mine;
  for (const StepRecord& r : dev.steps) {
    if (r.rank != 1) {
      EXPECT_EQ(r.injectedNs, 0);
      EXPECT_EQ(r.throttledNs, 0);
      continue;
    }
    EXPECT_EQ(r.throttledNs, r.computeNs - r.injectedNs);  // what the delay of the next step is made from
    mine.push_back(&r);
  }
  ASSERT_EQ(mine.size(), static_cast<std::size_t>(c.maxStepsPerEpoch * c.epochs));
  EXPECT_EQ(mine.front()->injectedNs, 0);  // the first step has no measure of this rank's compute yet
  for (std::size_t i = 1; i < mine.size(); ++i) {
    // (factor - 1) x the step before's compute without its delay, in one share per micro-batch.
    const std::int64_t base = mine[i - 1]->computeNs - mine[i - 1]->injectedNs;
    const auto share = static_cast<std::int64_t>(1.5 * static_cast<double>(base) / c.microBatches);
    EXPECT_EQ(mine[i]->injectedNs, share * c.microBatches) << "step " << i;
    EXPECT_GT(mine[i]->injectedNs, 0);
    EXPECT_GE(mine[i]->computeNs, mine[i]->injectedNs);  // the delay is part of the rank's compute
  }
}

TEST(CublasDeviceLoop, HostCommunicatorHasNoStreamAndSynchronizesPerRank) {
  const auto comm = makeCommunicator(Backend::Host, CommConfig{.nranks = 2});
  EXPECT_EQ(comm->rankStream(0), nullptr);
  EXPECT_NO_THROW(comm->synchronizeRank(1));
}

}  // namespace
}  // namespace cclab::trainer::cublas
