#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include "collectives/core/errors.h"

#include "test_util.h"
#include "trainer/async/async_trainer.h"
#include "trainer/async/batch_queue.h"
#include "trainer/async/parameter_server.h"
#include "trainer/async/ssp_clock.h"
#include "trainer/data/sampler.h"
#include "trainer/model/mlp.h"
#include "trainer/model/sgd.h"
#include "trainer/run/gradient_step.h"

namespace cclab::trainer {
namespace {

using testing::maxAbsDiff;
using testing::tinyConfig;
using testing::tinyData;

TEST(Async, OneWorkerIsPlainSgd) {
  const DataSplit data = tinyData();
  for (float lambda : {0.0F, 0.04F}) {
    TrainConfig c = tinyConfig(Mode::Async, 1, 32);
    c.async.dcLambda = lambda;
    const RunResult r = runAsync(c, data);
    // The reference: pull, gradient, SGD step, in one thread.
    const Mlp model{ParameterLayout(c.widths)};
    std::vector<float> w(static_cast<std::size_t>(model.layout().parameterCount())), g(w.size());
    model.initialize(w, c.seed);
    Sgd sgd(c.sgd, model.layout().parameterCount());
    GradientStep step(model, data.train, c.batch, 1);
    const DistributedSampler sampler(data.train.size(), 1, 0, c.seed, c.remainder);
    const RunClock clock;
    ComputeThrottle none;
    for (int e = 0; e < c.epochs; ++e) {
      const auto idx = sampler.indices(e);
      for (std::size_t s = 0; s + 32 <= idx.size(); s += 32) {
        step.compute(w, std::span<const std::int64_t>(idx).subspan(s, 32), g, clock, none);
        sgd.step(w, g, 1.0F);
      }
    }
    EXPECT_EQ(maxAbsDiff(r.finalParams, w), 0.0) << "lambda " << lambda;
    EXPECT_EQ(r.staleness.max(), 0);
    EXPECT_EQ(r.staleness.total(), 2 * 512 / 32);
  }
}

TEST(Async, SeveralWorkersSeeStaleParameters) {
  const DataSplit data = tinyData(4096, 128);
  TrainConfig c = tinyConfig(Mode::Async, 4, 64);
  c.widths = {testing::kFeatures, 128, 64, testing::kClasses};
  const RunResult r = runAsync(c, data);
  EXPECT_EQ(r.staleness.total(), 2 * 4096 / 16);
  EXPECT_GT(r.staleness.max(), 0);
  EXPECT_GT(r.staleness.mean(), 0.0);
  EXPECT_GT(r.epochs.back().testAccuracy, 0.5);
}

TEST(Async, SspBoundHoldsAndDcAsgdTrains) {
  const DataSplit data = tinyData(2048, 128);
  TrainConfig c = tinyConfig(Mode::Async, 3, 48);
  c.async.sspBound = 1;
  c.async.dcLambda = 0.04F;
  const RunResult r = runAsync(c, data);
  // With bound s, while worker i is between pull and push (clock c_i, the slowest is <= c_i) every
  // other clock goes from >= c_i - s to <= c_i + s + 1: at most 2s + 1 pushes each.
  EXPECT_LE(r.staleness.max(), (c.workers - 1) * (2 * c.async.sspBound + 1));
  EXPECT_GT(r.epochs.back().testAccuracy, 0.5);
}

TEST(Async, AStragglerClaimsFewerBatchesInsteadOfHoldingTheEpoch) {
  const DataSplit data = tinyData(4096, 64);
  TrainConfig c = tinyConfig(Mode::Async, 2, 64);
  c.epochs = 1;
  c.widths = {testing::kFeatures, 256, 256, testing::kClasses};
  c.straggler = {.rank = 1, .computeFactor = 4.0};
  const RunResult r = runAsync(c, data);
  std::int64_t steps[2] = {0, 0};
  for (const StepRecord& s : r.steps) ++steps[s.rank];
  EXPECT_EQ(steps[0] + steps[1], 4096 / 32);
  EXPECT_GT(steps[0], steps[1]);
}

TEST(Async, ARunThatDivergesStopsWithAnErrorInsteadOfTrainingOnNan) {
  const DataSplit data = tinyData();
  TrainConfig c = tinyConfig(Mode::Async, 2, 32);
  c.sgd.lr = 1e30F;
  try {
    (void)runAsync(c, data);
    ADD_FAILURE() << "a run with lr 1e30 reported success";
  } catch (const InvalidArgument& e) {
    ADD_FAILURE() << "divergence is a runtime failure, not bad usage: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("diverged"), std::string::npos) << e.what();
  }
}

TEST(Async, RejectsAStragglerDelayOrLinkFactor) {
  const DataSplit data = tinyData();
  TrainConfig c = tinyConfig(Mode::Async, 2, 32);
  c.straggler = {.rank = 1, .startDelay = std::chrono::milliseconds(1)};
  EXPECT_THROW(runAsync(c, data), InvalidArgument);
  c.straggler = {.rank = 1, .linkFactor = 2.0};
  EXPECT_THROW(runAsync(c, data), InvalidArgument);
  c.async.dcLambda = NAN;
  c.straggler = {};
  EXPECT_THROW(runAsync(c, data), InvalidArgument);
}

TEST(BatchQueue, HandsOutEveryBatchOnceAcrossThreads) {
  BatchQueue q;
  std::vector<std::int64_t> idx(1000);
  std::iota(idx.begin(), idx.end(), 0);
  q.reset(idx, 10, 97);
  std::vector<std::atomic<int>> seen(97);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      while (const auto c = q.next()) {
        EXPECT_EQ(c->indices.front(), c->batch * 10);
        ++seen[static_cast<std::size_t>(c->batch)];
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  EXPECT_THROW(q.reset(idx, 10, 101), InvalidArgument);
}

TEST(ParameterServer, CountsStalenessAndCompensatesDelays) {
  const SgdConfig plain{2.0F, 0.0F, 0.0F};
  ParameterServer ps({1.0F, 2.0F}, plain, 0.5F, 0.5F);  // lr 2 x gradScale 0.5 = a unit step
  std::vector<float> a(2), b(2);
  const auto va = ps.pull(a).version;
  const auto vb = ps.pull(b).version;
  EXPECT_EQ(ps.push(std::vector<float>{0.5F, 0.5F}, a, va).staleness, 0);  // w = {0.5, 1.5}
  // b is one update stale: g' = g + 0.5 * g^2 * (w_now - w_pulled) = 1 + 0.5 * 1 * (-0.5) = 0.75
  EXPECT_EQ(ps.push(std::vector<float>{1.0F, 1.0F}, b, vb).staleness, 1);
  const auto w = ps.snapshot();
  EXPECT_FLOAT_EQ(w[0], 0.5F - 0.75F);
  EXPECT_FLOAT_EQ(w[1], 1.5F - 0.75F);
  EXPECT_EQ(ps.version(), 2);
}

TEST(ParameterServer, AdaptiveDcScalesLambdaByTheGradientsRootMeanSquare) {
  const SgdConfig plain{2.0F, 0.0F, 0.0F};
  ParameterServer ps({1.0F}, plain, 0.5F, 0.5F, /*dcAdaptive=*/true);  // a unit step
  std::vector<float> a(1), b(1);
  const auto va = ps.pull(a).version;
  const auto vb = ps.pull(b).version;
  ps.push(std::vector<float>{0.5F}, a, va);  // w = 0.5; ms = 0.05 * 0.25
  // ms = 0.95 * 0.0125 + 0.05 * 1 = 0.061875; lambda = 0.5 / sqrt(ms + 1e-7); g' = 1 + lambda * 1 * (0.5 - 1)
  const double ms = 0.95 * 0.0125 + 0.05;
  const double g = 1.0 + 0.5 / std::sqrt(ms + 1e-7) * (0.5 - 1.0);
  EXPECT_EQ(ps.push(std::vector<float>{1.0F}, b, vb).staleness, 1);
  EXPECT_NEAR(ps.snapshot()[0], 0.5 - g, 1e-5);
  TrainConfig c = tinyConfig(Mode::Async, 2, 32);
  c.async.dcAdaptive = true;  // without a lambda to scale: refused
  EXPECT_THROW(validate(c), InvalidArgument);
}

TEST(ParameterServer, ForcedStalenessServesParametersKUpdatesOld) {
  const SgdConfig plain{1.0F, 0.0F, 0.0F};
  ParameterServer ps({0.0F}, plain, 0.0F, 1.0F);
  ps.forceStaleness(2);
  std::vector<float> w(1);
  // Each push subtracts 1: versions hold 0, -1, -2, ...; a pull sees the version 2 updates back.
  const std::vector<std::int64_t> wantStaleness = {0, 1, 2, 2, 2};
  for (std::size_t i = 0; i < wantStaleness.size(); ++i) {
    const auto v = ps.pull(w).version;
    EXPECT_EQ(v, std::max<std::int64_t>(0, static_cast<std::int64_t>(i) - 2)) << i;
    EXPECT_FLOAT_EQ(w[0], -static_cast<float>(v)) << i;
    EXPECT_EQ(ps.push(std::vector<float>{1.0F}, w, v).staleness, wantStaleness[i]) << i;
  }
}

TEST(Async, ForcedStalenessMakesEveryPushKStaleWithOneWorker) {
  const DataSplit data = tinyData(1024, 64);
  TrainConfig c = tinyConfig(Mode::Async, 1, 16);
  c.epochs = 1;
  c.async.forcedStaleness = 3;
  const RunResult r = runAsync(c, data);
  ASSERT_GT(r.steps.size(), 10U);
  for (std::size_t i = 0; i < r.steps.size(); ++i)
    EXPECT_EQ(r.steps[i].staleness, std::min<std::int64_t>(3, static_cast<std::int64_t>(i))) << i;
  c.async.forcedStaleness = -1;
  EXPECT_THROW(validate(c), InvalidArgument);
}

TEST(Async, SspGapNeverExceedsTheBound) {
  // The documented bound: no worker more than S pushes ahead of the slowest (it was S + 1).
  const DataSplit data = tinyData(2048, 64);
  for (int bound : {0, 1, 2}) {
    TrainConfig c = tinyConfig(Mode::Async, 3, 48);
    c.epochs = 1;
    c.async.sspBound = bound;
    c.straggler = {.rank = 2, .computeFactor = 3.0};  // the others would run ahead without the bound
    const RunResult r = runAsync(c, data);
    EXPECT_LE(r.sspMaxGap, std::max(bound, 1)) << bound;
    EXPECT_GE(r.sspMaxGap, 1) << bound;
  }
  TrainConfig c = tinyConfig(Mode::Async, 2, 32);
  EXPECT_EQ(runAsync(c, tinyData()).sspMaxGap, -1);
}

TEST(SspClock, BlocksTheLeaderUntilTheSlowestCatchesUp) {
  SspClock clock(2, 2);
  clock.waitTurn(0);
  clock.advance(0);
  clock.waitTurn(0);  // 1 ahead: its next push makes 2, allowed
  clock.advance(0);
  EXPECT_EQ(clock.maxGap(), 2);  // at the bound: it may not start another step (it could with S + 1)
  std::atomic<bool> passed{false};
  std::thread leader([&] {
    clock.waitTurn(0);
    passed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(passed);
  clock.advance(1);
  leader.join();
  EXPECT_TRUE(passed);
  clock.advance(0);
  EXPECT_EQ(clock.maxGap(), 2);
  // A finished worker no longer holds the others back.
  SspClock two(2, 0);
  two.advance(0);
  two.finish(1);
  EXPECT_EQ(two.waitTurn(0) >= 0, true);
  clock.abort();
  EXPECT_THROW(clock.waitTurn(0), Error);
}

}  // namespace
}  // namespace cclab::trainer
