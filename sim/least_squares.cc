// Bounded Levenberg-Marquardt and the dense solve it needs (least_squares.h).
#include "sim/least_squares.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "collectives/core/errors.h"

namespace cclab::sim {

namespace {

// Below this a pivot is zero in double precision (the smallest normal double is 2.2e-308).
constexpr double kSingularPivot = 1e-300;

double sumOfSquares(const std::vector<double>& r) {
  double c = 0;
  for (double x : r) c += x * x;
  return c;
}

}  // namespace

std::vector<double> solveDense(std::vector<std::vector<double>> A, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(A[r][c]) > std::abs(A[piv][c])) piv = r;
    std::swap(A[c], A[piv]);
    std::swap(b[c], b[piv]);
    if (std::abs(A[c][c]) < kSingularPivot) continue;
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = A[r][c] / A[c][c];
      for (std::size_t k = c; k < n; ++k) A[r][k] -= f * A[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n, 0.0);
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= A[i][k] * x[k];
    x[i] = std::abs(A[i][i]) < kSingularPivot ? 0.0 : s / A[i][i];
  }
  return x;
}

LeastSquaresResult levenbergMarquardt(const Residuals& residuals, std::vector<double> x, const std::vector<double>& lower,
                                      const std::vector<double>& upper, const LevenbergMarquardtOptions& o) {
  const std::size_t np = x.size();
  if (lower.size() != np || upper.size() != np) throw InvalidArgument("levenbergMarquardt: bounds need one value per unknown");
  for (std::size_t j = 0; j < np; ++j) x[j] = std::clamp(x[j], lower[j], upper[j]);
  std::vector<double> r = residuals(x);
  double cost = sumOfSquares(r), lambda = o.initialDamping;
  int it = 0;
  for (; it < o.maxIterations; ++it) {
    // Forward-difference Jacobian, then the normal equations JᵀJ d = -Jᵀr.
    std::vector<std::vector<double>> J(r.size(), std::vector<double>(np));
    for (std::size_t j = 0; j < np; ++j) {
      auto t = x;
      t[j] += o.jacobianStep;
      const auto rj = residuals(t);
      for (std::size_t i = 0; i < r.size(); ++i) J[i][j] = (rj[i] - r[i]) / o.jacobianStep;
    }
    std::vector<std::vector<double>> A(np, std::vector<double>(np, 0.0));
    std::vector<double> g(np, 0.0);
    for (std::size_t i = 0; i < r.size(); ++i)
      for (std::size_t a = 0; a < np; ++a) {
        g[a] -= J[i][a] * r[i];
        for (std::size_t b = 0; b < np; ++b) A[a][b] += J[i][a] * J[i][b];
      }
    bool accepted = false, converged = false;
    for (int tries = 0; tries < o.maxRejectedSteps && !accepted; ++tries) {
      auto M = A;
      for (std::size_t a = 0; a < np; ++a) M[a][a] += lambda * std::max(A[a][a], o.diagonalFloor);
      const auto d = solveDense(M, g);
      auto t = x;
      for (std::size_t a = 0; a < np; ++a) t[a] = std::clamp(t[a] + std::clamp(d[a], -o.maxStep, o.maxStep), lower[a], upper[a]);
      auto rt = residuals(t);
      const double ct = sumOfSquares(rt);
      if (ct < cost) {
        converged = cost - ct < o.relativeTolerance * std::max(1.0, cost);
        x = std::move(t);
        r = std::move(rt);
        cost = ct;
        lambda = std::max(lambda / o.dampingDecrease, o.minDamping);
        accepted = true;
      } else {
        lambda *= o.dampingIncrease;
      }
    }
    if (!accepted || converged) break;
  }
  return {std::move(x), cost, it};
}

}  // namespace cclab::sim
