// Leave-one-size-out cross-validation of calibrate() (sim/cross_validate.h).
#include <cmath>

#include <gtest/gtest.h>

#include "sim/cross_validate.h"
#include "sim/presets.h"

namespace cclab::sim {
namespace {

// Times the host preset itself predicts for a 2-rank ring allreduce, at five sizes.
Measurement modelled(const TopologySpec& spec) {
  Measurement m;
  m.source = "model";
  m.nranks = 2;
  for (Bytes size : {Bytes{4096}, Bytes{65536}, Bytes{1} << 20, Bytes{4} << 20, Bytes{16} << 20}) {
    MeasuredPoint p{size, size / 4, 0};
    p.time = predictPoint(spec, m, p, 0);
    m.points.push_back(p);
  }
  return m;
}

CalibrationOptions options() {
  CalibrationOptions o;
  o.params = {"classes.thread.latency_us", "classes.thread.bandwidth_gbps"};
  return o;
}

TEST(CrossValidation, HoldsOutEverySizeOnce) {
  const Measurement m = modelled(*findPreset("host"));
  EXPECT_EQ(crossValidationSizes({m}).size(), 5u);
  Measurement two = m;
  two.points.resize(2);
  EXPECT_TRUE(crossValidationSizes({two}).empty());  // too few sizes to leave one out
}

TEST(CrossValidation, ModelDataIsPredictedFromTheOtherSizes) {
  // The truth is the preset with other latency and bandwidth; each fold recovers them from 4 sizes.
  TopologySpec truth = *findPreset("host");
  truth.classes["thread"].latency = 3.0;
  truth.classes["thread"].bandwidth = 10.0;
  const auto cv = leaveOneSizeOut(*findPreset("host"), {modelled(truth)}, options());
  ASSERT_EQ(cv.size(), 5u);
  for (const auto& e : cv) EXPECT_LT(std::abs(e.relError), 0.02) << e.size;
}

TEST(CrossValidation, AnOutlierSizeIsWorseHeldOutThanFitted) {
  Measurement m = modelled(*findPreset("host"));
  m.points[2].time *= 3;  // 1 MiB measured three times slower than any latency and bandwidth explain
  const CalibrationResult fit = calibrate(*findPreset("host"), {m}, {}, options());
  const auto cv = leaveOneSizeOut(*findPreset("host"), {m}, options());
  ASSERT_EQ(cv.size(), 5u);
  double fitted = 0, held = 0;
  for (const auto& e : fit.fit)
    if (e.size == m.points[2].size) fitted = std::abs(e.relError);
  for (const auto& e : cv)
    if (e.size == m.points[2].size) held = std::abs(e.relError);
  EXPECT_GT(held, fitted);
  EXPECT_GT(held, 0.5);  // predicted from the other four, it is off by about the factor 3
}

// Issue 32 #21: cross-validation that cannot run says why (on main it was left out without a word):
// fewer than 3 sizes, or a fold that would leave fewer distinct points than parameters.
TEST(CrossValidation, SaysWhyItIsSkipped) {
  const Measurement m = modelled(*findPreset("host"));
  EXPECT_EQ(crossValidationSkipped({m}, 2), "");
  Measurement two = m;
  two.points.resize(2);
  EXPECT_EQ(crossValidationSkipped({two}, 2), "the fitted points have 2 distinct size(s); leaving one out needs at least 3");
  EXPECT_TRUE(leaveOneSizeOut(*findPreset("host"), {two}, options()).empty());
  Measurement three = m;
  three.points.resize(3);
  EXPECT_EQ(crossValidationSkipped({three}, 3), "without size 4096 bytes 2 distinct point(s) are left for 3 parameters");
}

}  // namespace
}  // namespace cclab::sim
