#include "sim/calibrate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "sim/replay.h"

namespace cclab::sim {
namespace {

// Splits "classes.NAME.FIELD" or "compute.FIELD".
struct ParamRef {
  std::string cls, field;
};

ParamRef parseRef(const std::string& name) {
  if (name.rfind("classes.", 0) == 0) {
    const auto dot = name.rfind('.');
    if (dot > 8) return {name.substr(8, dot - 8), name.substr(dot + 1)};
  } else if (name.rfind("compute.", 0) == 0) {
    return {"", name.substr(8)};
  }
  throw TopologyError("parameter '" + name + "' is not classes.NAME.latency_us|bandwidth_gbps or compute.reduce_gbps|copy_gbps|wake_us");
}

// Solves A x = b (small, dense) by Gaussian elimination with partial pivoting.
std::vector<double> solve(std::vector<std::vector<double>> A, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(A[r][c]) > std::abs(A[piv][c])) piv = r;
    std::swap(A[c], A[piv]);
    std::swap(b[c], b[piv]);
    if (std::abs(A[c][c]) < 1e-300) continue;
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
    x[i] = std::abs(A[i][i]) < 1e-300 ? 0.0 : s / A[i][i];
  }
  return x;
}

}  // namespace

ErrorSummary summarize(const std::vector<PointError>& errors) {
  ErrorSummary s;
  s.n = errors.size();
  for (const auto& e : errors) {
    s.meanAbs += std::abs(e.relError);
    s.max = std::max(s.max, std::abs(e.relError));
  }
  if (s.n > 0) s.meanAbs /= static_cast<double>(s.n);
  return s;
}

std::vector<std::string> defaultFitParams(const TopologySpec& spec) {
  std::vector<std::string> out;
  for (const auto& [name, c] : spec.classes) {
    if (c.latency > 0) out.push_back("classes." + name + ".latency_us");
    if (c.bandwidth > 0) out.push_back("classes." + name + ".bandwidth_gbps");
  }
  if (spec.compute.reduceBandwidth > 0) out.push_back("compute.reduce_gbps");
  if (spec.compute.wakeLatency > 0) out.push_back("compute.wake_us");
  return out;
}

double getParam(const TopologySpec& spec, const std::string& name) {
  const ParamRef ref = parseRef(name);
  if (ref.cls.empty()) {
    if (ref.field == "reduce_gbps") return spec.compute.reduceBandwidth;
    if (ref.field == "copy_gbps") return spec.compute.copyBandwidth;
    if (ref.field == "wake_us") return spec.compute.wakeLatency;
  } else {
    auto it = spec.classes.find(ref.cls);
    if (it == spec.classes.end()) throw TopologyError("parameter '" + name + "': no class '" + ref.cls + "' in the topology");
    if (ref.field == "latency_us") return it->second.latency;
    if (ref.field == "bandwidth_gbps") return it->second.bandwidth;
  }
  throw TopologyError("parameter '" + name + "' has an unknown field '" + ref.field + "'");
}

void setParam(TopologySpec& spec, const std::string& name, double value) {
  getParam(spec, name);  // validates
  const ParamRef ref = parseRef(name);
  if (ref.cls.empty()) {
    (ref.field == "reduce_gbps"  ? spec.compute.reduceBandwidth
     : ref.field == "copy_gbps" ? spec.compute.copyBandwidth
                                : spec.compute.wakeLatency) = value;
  } else {
    auto& c = spec.classes[ref.cls];
    (ref.field == "latency_us" ? c.latency : c.bandwidth) = value;
  }
}

Micros predictPoint(const TopologySpec& spec, const Measurement& m, const MeasuredPoint& pt, std::int64_t sliceBytes) {
  const Topology topo(spec.ranks == m.nranks || spec.kind == "graph" ? spec : resized(spec, m.nranks));
  const plan::Plan p = plan::makePlan(m.collective, m.algorithm, m.nranks, pt.count, 0);
  ReplayOptions o;
  o.elemSize = m.elemSize;
  o.sliceElems = sliceBytes > 0 ? std::max<std::int64_t>(1, sliceBytes / m.elemSize) : sliceBytes;
  return replay(p, topo, o).time;
}

std::vector<PointError> evaluate(const TopologySpec& spec, const std::vector<Measurement>& set, std::int64_t sliceBytes) {
  std::vector<PointError> out;
  for (const auto& m : set)
    for (const auto& pt : m.points) {
      const Micros pred = predictPoint(spec, m, pt, sliceBytes);
      out.push_back({m.source, m.nranks, pt.size, pt.time, pred, (pred - pt.time) / pt.time});
    }
  return out;
}

CalibrationResult calibrate(const TopologySpec& initial, const std::vector<Measurement>& fitSet,
                            const std::vector<Measurement>& checkSet, const CalibrationOptions& options) {
  CalibrationResult result;
  const std::vector<std::string> names = options.params.empty() ? defaultFitParams(initial) : options.params;
  if (names.empty()) throw TopologyError("calibrate: the topology has no parameter to fit");
  std::size_t npoints = 0;
  for (const auto& m : fitSet) npoints += m.points.size();
  if (npoints == 0) throw MeasuredError("calibrate: no measured points to fit");
  for (const auto& n : names) {
    const double v = getParam(initial, n);
    result.initial[n] = v;
    if (!(v > 0)) throw TopologyError("calibrate: parameter '" + n + "' must start positive (got " + std::to_string(v) + ")");
  }
  const std::size_t np = names.size();
  std::vector<double> theta(np);
  for (std::size_t i = 0; i < np; ++i) theta[i] = std::log(getParam(initial, names[i]));
  auto specOf = [&](const std::vector<double>& t) {
    TopologySpec s = initial;
    for (std::size_t i = 0; i < np; ++i) setParam(s, names[i], std::exp(t[i]));
    return s;
  };
  auto residuals = [&](const std::vector<double>& t) {
    const TopologySpec s = specOf(t);
    std::vector<double> r;
    for (const auto& m : fitSet)
      for (const auto& pt : m.points) r.push_back(std::log(predictPoint(s, m, pt, options.sliceBytes) / pt.time));
    return r;
  };
  auto cost = [](const std::vector<double>& r) {
    double c = 0;
    for (double x : r) c += x * x;
    return c;
  };
  constexpr double kStep = 1e-5;  // forward difference in log(parameter)
  // A parameter the data cannot see (a capacity that never binds) would drift without end; it stays
  // within kMaxDrift of its initial value and is reported as not identified when it ends at that bound.
  constexpr double kMaxDrift = 1000;
  std::vector<double> lower(np), upper(np);
  for (std::size_t j = 0; j < np; ++j) {
    lower[j] = theta[j] - std::log(kMaxDrift);
    upper[j] = theta[j] + std::log(kMaxDrift);
  }
  // Levenberg-Marquardt from one start; returns (theta, cost, iterations).
  auto fitFrom = [&](std::vector<double> theta) {
    std::vector<double> r = residuals(theta);
    double c = cost(r), lambda = 1e-3;
    int it = 0;
    for (; it < options.maxIterations; ++it) {
      std::vector<std::vector<double>> J(r.size(), std::vector<double>(np));
      for (std::size_t j = 0; j < np; ++j) {
        auto t = theta;
        t[j] += kStep;
        const auto rj = residuals(t);
        for (std::size_t i = 0; i < r.size(); ++i) J[i][j] = (rj[i] - r[i]) / kStep;
      }
      std::vector<std::vector<double>> A(np, std::vector<double>(np, 0.0));
      std::vector<double> g(np, 0.0);
      for (std::size_t i = 0; i < r.size(); ++i)
        for (std::size_t a = 0; a < np; ++a) {
          g[a] -= J[i][a] * r[i];
          for (std::size_t b = 0; b < np; ++b) A[a][b] += J[i][a] * J[i][b];
        }
      bool improved = false, converged = false;
      for (int tries = 0; tries < 12 && !improved; ++tries) {
        auto M = A;
        for (std::size_t a = 0; a < np; ++a) M[a][a] += lambda * std::max(A[a][a], 1e-12);
        const auto d = solve(M, g);
        auto t = theta;
        for (std::size_t a = 0; a < np; ++a)
          t[a] = std::clamp(t[a] + std::clamp(d[a], -2.0, 2.0), lower[a], upper[a]);
        const auto rt = residuals(t);
        const double ct = cost(rt);
        if (ct < c) {
          converged = c - ct < 1e-14 * std::max(1.0, c);
          theta = t;
          r = rt;
          c = ct;
          lambda = std::max(lambda / 3, 1e-9);
          improved = true;
        } else {
          lambda *= 4;
        }
      }
      if (!improved || converged) break;
    }
    return std::tuple{theta, c, it};
  };
  // The replay is piecewise linear in its parameters: a capacity that never binds at the start has no
  // gradient and can drift away. So the fit also starts with every bandwidth at a quarter and at four
  // times its value (surely binding, surely not) and keeps the best result.
  constexpr double kStartScales[] = {1.0, 0.25, 4.0};
  std::vector<double> best;
  double bestCost = std::numeric_limits<double>::infinity();
  int totalIterations = 0;
  for (double scale : kStartScales) {
    std::vector<double> start = theta;
    for (std::size_t j = 0; j < np; ++j)
      if (names[j].ends_with("_gbps")) start[j] += std::log(scale);
    auto [t, c, it] = fitFrom(start);
    totalIterations += it;
    if (c < bestCost) {
      bestCost = c;
      best = t;
    }
  }
  theta = best;
  result.iterations = totalIterations;
  result.spec = specOf(theta);
  for (std::size_t j = 0; j < np; ++j) {
    result.fitted[names[j]] = getParam(result.spec, names[j]);
    if (theta[j] <= lower[j] + 1e-6 || theta[j] >= upper[j] - 1e-6) result.unidentified.push_back(names[j]);
  }
  result.fit = evaluate(result.spec, fitSet, options.sliceBytes);
  result.check = evaluate(result.spec, checkSet, options.sliceBytes);
  return result;
}

}  // namespace cclab::sim
