#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "collectives/core/errors.h"
#include "test_util.h"
#include "trainer/model/evaluate.h"
#include "trainer/model/finite.h"
#include "trainer/model/gradient_check.h"
#include "trainer/model/layout.h"
#include "trainer/model/loss.h"
#include "trainer/model/mlp.h"
#include "trainer/model/sgd.h"
#include "trainer/sync/buckets.h"

namespace cclab::trainer {
namespace {

using testing::kClasses;
using testing::kFeatures;

TEST(Layout, OffsetsAreContiguousInForwardOrder) {
  const ParameterLayout l({784, 256, 128, 10});
  ASSERT_EQ(l.layerCount(), 3);
  EXPECT_EQ(l.layer(0).biasOffset, 784 * 256);
  EXPECT_EQ(l.layer(1).begin(), l.layer(0).end());
  EXPECT_EQ(l.parameterCount(), 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
  EXPECT_THROW(ParameterLayout({10}), InvalidArgument);
  EXPECT_THROW(ParameterLayout({10, 0, 2}), InvalidArgument);
}

TEST(Layout, ParsesWidths) {
  EXPECT_EQ(parseWidths("784-256-128-10"), (std::vector<std::int64_t>{784, 256, 128, 10}));
  EXPECT_EQ(formatWidths({4, 3}), "4-3");
  for (const char* bad : {"", "784", "784--10", "a-b", "784-0-10", "784-10-"})
    EXPECT_THROW(parseWidths(bad), InvalidArgument) << bad;
}

TEST(Loss, MatchesTheClosedForm) {
  const std::vector<float> logits{1.0F, 2.0F, 0.5F, 0.0F, 0.0F, 3.0F};
  const std::vector<int> labels{1, 0};
  std::vector<float> grad(6);
  const auto r = softmaxCrossEntropy(logits, labels, 3, 0.5F, grad);
  const double z0 = std::exp(1.0) + std::exp(2.0) + std::exp(0.5);
  const double z1 = 2.0 + std::exp(3.0);
  EXPECT_NEAR(r.lossSum, (std::log(z0) - 2.0) + std::log(z1), 1e-5);
  EXPECT_EQ(r.correct, 1);
  EXPECT_NEAR(grad[1], 0.5 * (std::exp(2.0) / z0 - 1.0), 1e-6);
  EXPECT_NEAR(grad[5], 0.5 * (std::exp(3.0) / z1), 1e-6);
}

TEST(GradientCheck, BackwardMatchesFiniteDifferences) {
  const DataSplit data = testing::tinyData(64, 8);
  const Mlp model{ParameterLayout({kFeatures, 16, 8, kClasses})};
  std::vector<float> w(static_cast<std::size_t>(model.layout().parameterCount()));
  model.initialize(w, 5);
  GradientCheckConfig config;
  config.batch = 16;
  config.parametersPerLayer = 40;
  const GradientCheckResult r = checkGradients(model, w, data.train, config);
  EXPECT_EQ(r.checked, 40 + 40 + (8 * kClasses + kClasses));
  EXPECT_LT(r.maxError, 1e-2) << "worst parameter " << r.worstParameter;
}

TEST(Mlp, AccumulatesGradientsAndReportsLayersLastToFirst) {
  const DataSplit data = testing::tinyData(32, 8);
  const Mlp model{ParameterLayout({kFeatures, 16, 8, kClasses})};
  std::vector<float> w(static_cast<std::size_t>(model.layout().parameterCount())), g(w.size(), 0.0F);
  model.initialize(w, 1);
  MlpWorkspace ws(model.layout(), 4);
  std::copy_n(data.train.values.begin(), 4 * kFeatures, ws.input().begin());
  const std::vector<int> y{0, 1, 2, 3};
  const auto logits = model.forward(w, 4, ws);
  softmaxCrossEntropy(logits, y, kClasses, 0.25F, model.logitGradient(ws));
  std::vector<int> order;
  model.backward(w, 4, ws, g, [&](int l) { order.push_back(l); });
  EXPECT_EQ(order, (std::vector<int>{2, 1, 0}));
  const std::vector<float> once = g;
  softmaxCrossEntropy(model.forward(w, 4, ws), y, kClasses, 0.25F, model.logitGradient(ws));
  model.backward(w, 4, ws, g);
  for (std::size_t i = 0; i < g.size(); ++i) ASSERT_FLOAT_EQ(g[i], 2.0F * once[i]);
}

TEST(Finite, FindsEveryInfOrNanAnywhere) {
  std::vector<float> v(1003);
  std::iota(v.begin(), v.end(), -500.0F);
  v[7] = std::numeric_limits<float>::max();
  v[8] = -std::numeric_limits<float>::max();
  v[9] = std::numeric_limits<float>::denorm_min();
  EXPECT_TRUE(allFinite(v));
  EXPECT_TRUE(allFinite({}));
  for (float bad : {INFINITY, -INFINITY, NAN, -NAN})
    for (std::size_t at : {std::size_t{0}, std::size_t{500}, std::size_t{1002}}) {
      std::vector<float> w = v;
      w[at] = bad;
      EXPECT_FALSE(allFinite(w)) << bad << " at " << at;
    }
}

TEST(Sgd, RejectsNonFiniteSettings) {
  EXPECT_THROW(Sgd({INFINITY, 0.9F, 0.0F}, 4), InvalidArgument);
  EXPECT_THROW(Sgd({NAN, 0.9F, 0.0F}, 4), InvalidArgument);
  EXPECT_THROW(Sgd({0.1F, 0.9F, INFINITY}, 4), InvalidArgument);
  EXPECT_NO_THROW(Sgd({0.1F, 0.9F, 0.0F}, 4));
}

TEST(Sgd, FollowsTorchSgdWithMomentumAndWeightDecay) {
  Sgd sgd({0.1F, 0.9F, 0.01F}, 1);
  std::vector<float> w{1.0F};
  const std::vector<float> g{0.5F};
  sgd.step(w, g, 2.0F);  // d = 1.0 + 0.01 = 1.01; v = 1.01; w = 1 - 0.101
  EXPECT_FLOAT_EQ(w[0], 0.899F);
  sgd.step(w, g, 2.0F);  // d = 1 + 0.00899; v = 0.909 + 1.00899
  EXPECT_NEAR(w[0], 0.899 - 0.1 * (0.9 * 1.01 + 1.0 + 0.01 * 0.899), 1e-6);
  EXPECT_THROW(Sgd({0.0F, 0.9F, 0.0F}, 1), InvalidArgument);
  EXPECT_THROW(Sgd({0.1F, 1.0F, 0.0F}, 1), InvalidArgument);
}

TEST(Evaluate, CountsAccuracyOverTheWholeSet) {
  const DataSplit data = testing::tinyData(16, 37);
  const Mlp model{ParameterLayout({kFeatures, kClasses})};
  std::vector<float> w(static_cast<std::size_t>(model.layout().parameterCount()), 0.0F);
  const EvalResult r = evaluate(model, w, data.test, 10);  // 37 = 3 full batches + 7
  EXPECT_NEAR(r.loss, std::log(static_cast<double>(kClasses)), 1e-6);
  // All logits tie: arg-max is class 0.
  const auto zeros = std::count(data.test.labels.begin(), data.test.labels.end(), 0);
  EXPECT_NEAR(r.accuracy, static_cast<double>(zeros) / 37.0, 1e-12);
}

TEST(Buckets, FirstBucketIsSmallAndBucketsTileTheGradientLastLayerFirst) {
  const ParameterLayout l({784, 256, 128, 10});
  // Defaults: the whole 0.94 MB model fits the 1 MiB first bucket.
  const auto one = planBuckets(l, 1 << 20, 25 << 20);
  ASSERT_EQ(one.size(), 1U);
  EXPECT_EQ(one[0].count, l.parameterCount());
  // Small caps: one bucket per layer, the last layer first.
  const auto many = planBuckets(l, 4096, 64 * 1024);
  ASSERT_EQ(many.size(), 3U);
  EXPECT_EQ(many[0].firstLayer, 2);
  EXPECT_EQ(many[2].firstLayer, 0);
  std::int64_t end = l.parameterCount();
  for (const Bucket& b : many) {
    EXPECT_EQ(b.offset + b.count, end);
    end = b.offset;
  }
  EXPECT_EQ(end, 0);
  // A first cap that two layers need: layers 2 and 1 share the first bucket.
  const auto two = planBuckets(l, 100 * 1024, 25 << 20);
  ASSERT_EQ(two.size(), 2U);
  EXPECT_EQ(two[0].firstLayer, 1);
  EXPECT_EQ(two[0].lastLayer, 2);
}

}  // namespace
}  // namespace cclab::trainer
