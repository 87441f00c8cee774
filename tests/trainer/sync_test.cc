#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/core/errors.h"
#include "test_util.h"
#include "trainer/data/sampler.h"
#include "trainer/model/mlp.h"
#include "trainer/model/sgd.h"
#include "trainer/run/divergence.h"
#include "trainer/run/gradient_step.h"
#include "trainer/run/trainer.h"
#include "trainer/sync/sync_trainer.h"

namespace cclab::trainer {
namespace {

using testing::maxAbsDiff;
using testing::tinyConfig;
using testing::tinyData;

// Float sums in a different order (per-worker means, then a ring sum) differ in the last bits;
// after a few dozen steps the weights agree to this.
constexpr double kTolerance = 2e-5;

// The plain single-threaded loop every parallel mode must reproduce.
std::vector<float> plainSgd(const TrainConfig& c, const DataSplit& data) {
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
    for (std::int64_t s = 0; s < static_cast<std::int64_t>(idx.size()) / c.batch; ++s) {
      step.compute(w, std::span<const std::int64_t>(idx).subspan(static_cast<std::size_t>(s * c.batch),
                                                                    static_cast<std::size_t>(c.batch)),
                   g, clock, none);
      sgd.step(w, g, 1.0F);
    }
  }
  return w;
}

RunResult syncRun(const TrainConfig& c, const DataSplit& data) {
  auto comm = makeCommunicator(Backend::Host, {c.workers});
  return runSync(c, data, *comm);
}

TEST(Sync, OneWorkerIsPlainSgd) {
  const DataSplit data = tinyData();
  const TrainConfig c = tinyConfig(Mode::Sync, 1, 32);
  const RunResult r = syncRun(c, data);
  EXPECT_EQ(maxAbsDiff(r.finalParams, plainSgd(c, data)), 0.0);
  EXPECT_EQ(r.steps.size(), 2U * 512 / 32);
  ASSERT_EQ(r.epochs.size(), 2U);
  EXPECT_GT(r.epochs.back().testAccuracy, 0.5);
}

TEST(Sync, NWorkersEqualOneWorkerOnTheSameGlobalBatch) {
  const DataSplit data = tinyData();
  const std::vector<float> want = plainSgd(tinyConfig(Mode::Sync, 1, 32), data);
  for (int n : {2, 4}) {
    const RunResult r = syncRun(tinyConfig(Mode::Sync, n, 32), data);
    EXPECT_LT(maxAbsDiff(r.finalParams, want), kTolerance) << n << " workers";
    EXPECT_EQ(r.replicaDivergence, 0.0) << "replicas must stay identical";
  }
}

TEST(Sync, EqualityHoldsWithSmallBucketsEveryAlgorithmAndNoOverlap) {
  const DataSplit data = tinyData();
  const std::vector<float> want = plainSgd(tinyConfig(Mode::Sync, 1, 32), data);
  for (plan::Algorithm a : {plan::Algorithm::Ring, plan::Algorithm::Tree, plan::Algorithm::HalvingDoubling})
    for (bool overlap : {true, false}) {
      TrainConfig c = tinyConfig(Mode::Sync, 4, 32);
      c.sync.algorithm = a;
      c.sync.overlap = overlap;
      c.sync.firstBucketBytes = 64;  // one bucket per layer
      c.sync.bucketBytes = 128;
      const RunResult r = syncRun(c, data);
      EXPECT_LT(maxAbsDiff(r.finalParams, want), kTolerance) << plan::name(a) << " overlap " << overlap;
    }
}

TEST(Sync, GradientAccumulationEqualsTheWholeBatch) {
  const DataSplit data = tinyData();
  const std::vector<float> want = plainSgd(tinyConfig(Mode::Sync, 1, 32), data);
  TrainConfig c = tinyConfig(Mode::Sync, 2, 32);
  c.microBatches = 4;  // 2 workers x 4 micro-batches of 4 samples
  EXPECT_LT(maxAbsDiff(syncRun(c, data).finalParams, want), kTolerance);
}

TEST(Sync, RecordsAConsistentTimeSplit) {
  const DataSplit data = tinyData();
  TrainConfig c = tinyConfig(Mode::Sync, 3, 48);
  c.trace = true;
  c.sync.firstBucketBytes = 64;
  const RunResult r = syncRun(c, data);
  ASSERT_FALSE(r.steps.empty());
  for (const StepRecord& s : r.steps) {
    EXPECT_GE(s.waitNs, 0);
    EXPECT_GE(s.exposedCommNs, 0);
    EXPECT_EQ(s.computeNs + s.waitNs + s.exposedCommNs, s.stepNs());
    EXPECT_LE(s.overlappedNs, s.commBusyNs);
  }
  EXPECT_FALSE(r.trace.empty());
  EXPECT_GT(r.samples, 0);
}

TEST(Sync, StragglerSlowsItsComputeByTheFactor) {
  // Timing-free check: the straggler's recorded compute exceeds its peers' on average.
  const DataSplit data = tinyData(2048, 64);
  TrainConfig c = tinyConfig(Mode::Sync, 2, 256);
  c.epochs = 1;
  c.widths = {testing::kFeatures, 256, 256, testing::kClasses};
  c.straggler = {.rank = 1, .computeFactor = 3.0};
  const RunResult r = syncRun(c, data);
  std::int64_t compute[2] = {0, 0};
  for (const StepRecord& s : r.steps) compute[s.rank] += s.computeNs;
  EXPECT_GT(compute[1], compute[0]);
}

TEST(Sync, ARunThatDivergesStopsWithAnErrorInsteadOfTrainingOnNan) {
  const DataSplit data = tinyData();
  TrainConfig c = tinyConfig(Mode::Sync, 2, 32);
  c.sgd.lr = 1e30F;  // finite, so it passes validation; the parameters overflow within a few steps
  try {
    (void)train(c, data);
    ADD_FAILURE() << "a run with lr 1e30 reported success";
  } catch (const InvalidArgument& e) {
    ADD_FAILURE() << "divergence is a runtime failure, not bad usage: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("diverged"), std::string::npos) << e.what();
  }
}

// Replicas that end apart are a failed run (exit 1), not a figure in the JSON only.
TEST(Sync, ReplicasThatDriftApartAreAnError) {
  EXPECT_NO_THROW(checkReplicasAgree(0.0));
  for (double d : {1e-12, 0.25, double(INFINITY)}) {
    try {
      checkReplicasAgree(d);
      ADD_FAILURE() << "divergence " << d << " accepted";
    } catch (const InvalidArgument& e) {
      ADD_FAILURE() << "a runtime failure, not bad usage: " << e.what();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("the replicas drifted apart"), std::string::npos) << e.what();
    }
  }
  const DataSplit data = tinyData();
  EXPECT_EQ(syncRun(tinyConfig(Mode::Sync, 3, 48), data).replicaDivergence, 0.0);
}

TEST(Sync, RejectsNonFiniteHyperParameters) {
  const DataSplit data = tinyData();
  for (float lr : {INFINITY, NAN, -0.1F, 0.0F}) {
    TrainConfig c = tinyConfig(Mode::Sync, 2, 32);
    c.sgd.lr = lr;
    EXPECT_THROW(train(c, data), InvalidArgument) << lr;
  }
  TrainConfig c = tinyConfig(Mode::Sync, 2, 32);
  c.sgd.weightDecay = INFINITY;
  EXPECT_THROW(train(c, data), InvalidArgument);
}

TEST(Sync, RejectsMismatchedConfig) {
  const DataSplit data = tinyData();
  auto comm = makeCommunicator(Backend::Host, {2});
  EXPECT_THROW(runSync(tinyConfig(Mode::Sync, 3, 48), data, *comm), InvalidArgument);  // 3 workers, 2 ranks
  TrainConfig c = tinyConfig(Mode::Sync, 2, 30);  // 30 % (2 x 4) != 0
  c.microBatches = 4;
  EXPECT_THROW(train(c, data), InvalidArgument);
  TrainConfig wide = tinyConfig(Mode::Sync, 2, 32);
  wide.widths = {784, 10};  // does not fit 20 features
  EXPECT_THROW(train(wide, data), InvalidArgument);
  TrainConfig big = tinyConfig(Mode::Sync, 2, 2048);  // batch larger than the shard
  EXPECT_THROW(train(big, data), InvalidArgument);
}

}  // namespace
}  // namespace cclab::trainer
