// The solver behind calibrate(): recovers known parameters from data generated with them, stays in
// its bounds, and solves small dense systems exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/least_squares.h"

namespace cclab::sim {
namespace {

TEST(LeastSquares, RecoversAnExponentialFromItsOwnSamples) {
  // y = a·exp(b·t) with a = 2.5, b = -0.7 at t = 0, 0.5, ..., 4; start far off at a = 1, b = 0.
  std::vector<double> ts, ys;
  for (int i = 0; i <= 8; ++i) {
    ts.push_back(0.5 * i);
    ys.push_back(2.5 * std::exp(-0.7 * ts.back()));
  }
  auto residuals = [&](const std::vector<double>& x) {
    std::vector<double> r;
    for (std::size_t i = 0; i < ts.size(); ++i) r.push_back(x[0] * std::exp(x[1] * ts[i]) - ys[i]);
    return r;
  };
  const auto fit = levenbergMarquardt(residuals, {1.0, 0.0}, {-10, -10}, {10, 10});
  EXPECT_NEAR(fit.x[0], 2.5, 1e-6);
  EXPECT_NEAR(fit.x[1], -0.7, 1e-6);
  EXPECT_LT(fit.cost, 1e-12);
  EXPECT_GT(fit.iterations, 0);
}

TEST(LeastSquares, StaysInsideItsBounds) {
  // Minimum at x = 5, bound at 3: ends on the bound.
  auto residuals = [](const std::vector<double>& x) { return std::vector<double>{x[0] - 5}; };
  const auto fit = levenbergMarquardt(residuals, {0.0}, {-3}, {3});
  EXPECT_DOUBLE_EQ(fit.x[0], 3.0);
  EXPECT_DOUBLE_EQ(fit.cost, 4.0);
}

TEST(LeastSquares, DenseSolveWithPivoting) {
  // A zero in the first pivot position needs a row swap.
  const auto x = solveDense({{0, 2, 1}, {1, 1, 1}, {2, 0, 3}}, {5, 6, 13});
  ASSERT_EQ(x.size(), 3u);
  EXPECT_NEAR(x[0], 2, 1e-12);  // 0·2 + 2·1 + 1·3 = 5, 2 + 1 + 3 = 6, 4 + 0 + 9 = 13
  EXPECT_NEAR(x[1], 1, 1e-12);
  EXPECT_NEAR(x[2], 3, 1e-12);
}

}  // namespace
}  // namespace cclab::sim
