// calibrate(): a topology fitted to measured times by least squares over log(parameter) (calibrate.h).
#include "sim/calibrate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "sim/least_squares.h"
#include "sim/predictor.h"
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

// The replay is piecewise linear in its parameters: a capacity that never binds at the start has no
// gradient and can drift away. So the fit also starts with every bandwidth at a quarter and at four
// times its value (surely binding, surely not) and keeps the best result.
constexpr double kStartScales[] = {1.0, 0.25, 4.0};

// What the replay of one measured point runs (predictPoint replays it, the work estimate counts it).
struct PointReplay {
  Topology topo;
  std::unique_ptr<plan::OpSource> ops;
  ReplayOptions options;
};

PointReplay pointReplay(const TopologySpec& spec, const Measurement& m, const MeasuredPoint& pt, std::int64_t sliceBytes) {
  Topology topo(spec.ranks == m.nranks || spec.kind == TopologyKind::Graph ? spec : resized(spec, m.nranks));
  // The ring allreduce from its rule: a measured file may have up to kMaxReplayRanks ranks, whose
  // materialized ring plan would not fit in memory. In the topology's plan shape (channels, ranks and
  // NICs per node), as every other prediction: a cluster's ring on one channel would cross one NIC.
  auto ops = plan::makeOpSource(m.collective, m.algorithm, m.nranks, pt.count, 0, Predictor{.topo = topo}.shape());
  ReplayOptions o;
  o.elemSize = m.elemSize;
  o.sliceElems = sliceBytes > 0 ? std::max<std::int64_t>(1, sliceBytes / m.elemSize) : sliceBytes;
  return {std::move(topo), std::move(ops), o};
}

}  // namespace

CalibrationSets splitForCalibration(const std::vector<Measurement>& measured, const std::vector<Measurement>& checkOnly,
                                    const std::vector<Bytes>& holdout, Bytes minSize) {
  CalibrationSets sets;
  for (const Measurement& file : measured) {
    Measurement fit = file, held = file;
    fit.points.clear();
    held.points.clear();
    for (const auto& pt : file.points) {
      if (pt.size < minSize) continue;
      (std::find(holdout.begin(), holdout.end(), pt.size) != holdout.end() ? held : fit).points.push_back(pt);
    }
    sets.fit.push_back(std::move(fit));
    if (!held.points.empty()) sets.check.push_back(std::move(held));
  }
  for (Measurement m : checkOnly) {
    std::erase_if(m.points, [&](const MeasuredPoint& pt) { return pt.size < minSize; });
    sets.check.push_back(std::move(m));
  }
  return sets;
}

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
  const PointReplay r = pointReplay(spec, m, pt, sliceBytes);
  return replay(*r.ops, r.topo, r.options).time;
}

std::vector<std::string> fitParams(const TopologySpec& spec, const CalibrationOptions& options) {
  return options.params.empty() ? defaultFitParams(spec) : options.params;
}

std::size_t distinctPoints(const std::vector<Measurement>& set) {
  std::set<std::tuple<plan::Collective, plan::Algorithm, int, Bytes>> points;
  for (const auto& m : set)
    for (const auto& pt : m.points) points.emplace(m.collective, m.algorithm, m.nranks, pt.size);
  return points.size();
}

void checkDetermined(const std::vector<Measurement>& fitSet, std::size_t nparams) {
  const std::size_t n = distinctPoints(fitSet);
  if (n < nparams)
    throw MeasuredError("calibrate: " + std::to_string(nparams) + " parameters cannot be fitted to " + std::to_string(n) +
                        " distinct measured point(s) (a point: one collective, algorithm, rank count and size; with fewer points "
                        "than parameters any error is 0): measure more sizes or name fewer with --params");
}

std::int64_t replaysPerFit(std::size_t nparams, const CalibrationOptions& options) {
  const LevenbergMarquardtOptions lm;
  const std::int64_t perStart =
      1 + std::int64_t{options.maxIterations} * (static_cast<std::int64_t>(nparams) + lm.maxRejectedSteps);
  return static_cast<std::int64_t>(std::size(kStartScales)) * perStart + 1;  // + the fitted topology's evaluation
}

void addCalibrationWork(const TopologySpec& spec, const std::vector<Measurement>& fitSet, const std::vector<Measurement>& checkSet,
                        const CalibrationOptions& options, std::size_t folds, ReplayWork& work) {
  const std::int64_t fits = replaysPerFit(fitParams(spec, options).size(), options);
  const auto times = static_cast<std::int64_t>(folds + 1);
  for (const auto& m : fitSet)
    for (const auto& pt : m.points) {
      const PointReplay r = pointReplay(spec, m, pt, options.sliceBytes);
      // Once before the fit (the error before fitting), then in every fit: the fit's own and each fold's.
      work.add(replayOpSlices(*r.ops, r.topo, r.options, kMaxReplayOpSlicesRaised), 1 + fits * times);
    }
  for (const auto& m : checkSet)
    for (const auto& pt : m.points) {
      const PointReplay r = pointReplay(spec, m, pt, options.sliceBytes);
      work.add(replayOpSlices(*r.ops, r.topo, r.options, kMaxReplayOpSlicesRaised));
    }
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

void checkCalibrateInput(const std::vector<Measurement>& set) {
  for (const Measurement& m : set) {
    if (!m.collectiveGiven)
      throw MeasuredError("measured file '" + m.source + "': field 'collective' is missing (a fit needs to know what was measured; the "
                          "bench's -J names it)");
    if (m.nranks > kMaxCalibrateRanks)
      throw MeasuredError("measured file '" + m.source + "': nranks " + std::to_string(m.nranks) + " is more than calibrate fits (at most " +
                          std::to_string(kMaxCalibrateRanks) + ": every step of the fit replays every point, minutes past it)");
  }
}

CalibrationResult calibrate(const TopologySpec& initial, const std::vector<Measurement>& fitSet,
                            const std::vector<Measurement>& checkSet, const CalibrationOptions& options) {
  checkCalibrateInput(fitSet);
  checkCalibrateInput(checkSet);
  CalibrationResult result;
  const std::vector<std::string> names = fitParams(initial, options);
  if (names.empty()) throw TopologyError("calibrate: the topology has no parameter to fit");
  std::size_t npoints = 0;
  for (const auto& m : fitSet) npoints += m.points.size();
  if (npoints == 0) throw MeasuredError("calibrate: no measured points to fit");
  checkDetermined(fitSet, names.size());
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
  // A parameter the data cannot see (a capacity that never binds) would drift without end; it stays
  // within kMaxDrift of its initial value and is reported as not identified when it ends at that bound.
  constexpr double kMaxDrift = 1000;
  std::vector<double> lower(np), upper(np);
  for (std::size_t j = 0; j < np; ++j) {
    lower[j] = theta[j] - std::log(kMaxDrift);
    upper[j] = theta[j] + std::log(kMaxDrift);
  }
  LevenbergMarquardtOptions lm;
  lm.maxIterations = options.maxIterations;
  std::vector<double> best;
  double bestCost = std::numeric_limits<double>::infinity();
  int totalIterations = 0;
  for (double scale : kStartScales) {
    std::vector<double> start = theta;
    for (std::size_t j = 0; j < np; ++j)
      if (names[j].ends_with("_gbps")) start[j] += std::log(scale);
    const LeastSquaresResult fit = levenbergMarquardt(residuals, start, lower, upper, lm);
    totalIterations += fit.iterations;
    if (fit.cost < bestCost) {
      bestCost = fit.cost;
      best = fit.x;
    }
  }
  theta = best;
  result.iterations = totalIterations;
  result.spec = specOf(theta);
  for (std::size_t j = 0; j < np; ++j) {
    result.fitted[names[j]] = getParam(result.spec, names[j]);
    // At a bound to within a millionth in log(parameter), i.e. 1e-4 % of the parameter.
    constexpr double kAtBound = 1e-6;
    if (theta[j] <= lower[j] + kAtBound || theta[j] >= upper[j] - kAtBound) result.unidentified.push_back(names[j]);
  }
  result.fit = evaluate(result.spec, fitSet, options.sliceBytes);
  result.check = evaluate(result.spec, checkSet, options.sliceBytes);
  return result;
}

}  // namespace cclab::sim
