// A small bounded Levenberg-Marquardt solver for nonlinear least squares: minimise sum_i r_i(x)^2
// with lower <= x <= upper, by damped Gauss-Newton steps (Nocedal & Wright, "Numerical
// Optimization", 2nd ed., §10.3; Madsen, Nielsen & Tingleff, "Methods for Non-Linear Least Squares
// Problems", 2004, §3.2), forward-difference Jacobians, and steps clamped into the bounds.
// calibrate() fits a topology with it; it knows nothing of topologies.
#pragma once

#include <functional>
#include <vector>

namespace cclab::sim {

struct LevenbergMarquardtOptions {
  int maxIterations = 60;  // Jacobian evaluations at most (each costs n + 1 residual evaluations)
  // Marquardt's damping λ scales the diagonal of JᵀJ. Starting at 1e-3 makes the first step almost a
  // Gauss-Newton step, the value Madsen et al. (§3.2) recommend when the start is believed good.
  double initialDamping = 1e-3;
  // After an accepted step λ /= 3, after a rejected one λ *= 4 (unequal, so λ cannot cycle between two
  // values); λ never drops below 1e-9, where the step is Gauss-Newton to double precision anyway.
  double dampingDecrease = 3, dampingIncrease = 4, minDamping = 1e-9;
  // Rejected steps tried per iteration: 12 increases multiply λ by 4^12 ≈ 1.7e7, which turns the step
  // into a gradient step some 1e7 times shorter than Gauss-Newton's; if even that does not lower the
  // cost, x is a minimum to the precision of the finite-difference Jacobian and the solver stops.
  int maxRejectedSteps = 12;
  // Stop when an accepted step lowers the cost by less than this fraction of it (or of 1 when the
  // cost is below 1): about 50 units in the last place of a double, i.e. nothing left to gain.
  double relativeTolerance = 1e-14;
  // No coordinate moves more than this in one step: in calibrate(), x is log(parameter), so a step
  // changes a parameter by at most e^2 ≈ 7.4x, which keeps a linearisation of the piecewise-linear
  // replay from jumping across several regimes (a link binding, then not) at once.
  double maxStep = 2.0;
  // Forward-difference step of the Jacobian: calibrate's x is log(parameter), so 1e-5 is a relative
  // change of 0.001% of a parameter, large against double rounding (1e-16) and the replay's sums of
  // thousands of terms (rounding near 1e-12 relative), small against its piecewise-linear kinks.
  double jacobianStep = 1e-5;
  // Floor under a diagonal element of JᵀJ when damping: a coordinate with no gradient still gets a
  // finite damping instead of a zero pivot.
  double diagonalFloor = 1e-12;
};

struct LeastSquaresResult {
  std::vector<double> x;
  double cost = 0;  // sum of squared residuals at x
  int iterations = 0;
};

using Residuals = std::function<std::vector<double>(const std::vector<double>&)>;

// Starts at x0 (clamped into the bounds); lower and upper have x0's size.
LeastSquaresResult levenbergMarquardt(const Residuals& residuals, std::vector<double> x0, const std::vector<double>& lower,
                                      const std::vector<double>& upper, const LevenbergMarquardtOptions& options = {});

// Solves A x = b for a small dense A by Gaussian elimination with partial pivoting; a column with no
// usable pivot (|pivot| < 1e-300, i.e. singular in double precision) gets x = 0.
std::vector<double> solveDense(std::vector<std::vector<double>> A, std::vector<double> b);

}  // namespace cclab::sim
