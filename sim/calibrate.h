// Calibration: fit a topology's latencies, bandwidths and reduction speed to measured times.
//
// The model is the replay itself (not a formula), so contention and slicing are part of the fit.
// Parameters are named by their place in the topology file ("classes.thread.latency_us",
// "classes.memory.bandwidth_gbps", "compute.reduce_gbps", "compute.copy_gbps"). The fit minimises the
// squared relative errors log(predicted/measured) by Levenberg-Marquardt over log(parameter), with
// forward-difference derivatives (Nocedal & Wright, "Numerical Optimization", ch. 10).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/measured.h"
#include "sim/replay_work.h"
#include "sim/topology.h"

namespace cclab::sim {

struct CalibrationOptions {
  std::vector<std::string> params;  // empty: defaultFitParams(spec)
  std::int64_t sliceBytes = 0;      // replay slicing: 0 auto, < 0 whole ops
  int maxIterations = 60;
};

struct PointError {
  std::string source;
  int nranks = 0;
  Bytes size = 0;
  Micros measured = 0, predicted = 0;
  double relError = 0;  // (predicted - measured) / measured
};

struct ErrorSummary {
  double meanAbs = 0, max = 0;  // relative, over the points
  std::size_t n = 0;
};
ErrorSummary summarize(const std::vector<PointError>& errors);

struct CalibrationResult {
  TopologySpec spec;                      // the calibrated topology
  std::map<std::string, double> initial;  // parameter values before and after
  std::map<std::string, double> fitted;
  std::vector<PointError> fit, check;     // per point, with the calibrated topology
  int iterations = 0;
  std::vector<std::string> unidentified;  // parameters that ended at their bound (x1000 or /1000)
};

// The points fitted and the points only checked: sizes below minSize are dropped everywhere; points of
// the `measured` files whose size is in `holdout` are checked, the rest fitted; every point of the
// `checkOnly` files is checked. A file left with no checked point adds no check entry.
struct CalibrationSets {
  std::vector<Measurement> fit, check;
};
CalibrationSets splitForCalibration(const std::vector<Measurement>& measured, const std::vector<Measurement>& checkOnly,
                                    const std::vector<Bytes>& holdout, Bytes minSize);

// Every latency > 0 and every bandwidth of the spec's classes, and the compute bandwidths > 0.
std::vector<std::string> defaultFitParams(const TopologySpec& spec);
// The parameters a fit fits: options.params, else defaultFitParams(spec).
std::vector<std::string> fitParams(const TopologySpec& spec, const CalibrationOptions& options);

// Points of the set that tell the fit something different: distinct (collective, algorithm, nranks,
// size); two files measuring the same call count once.
std::size_t distinctPoints(const std::vector<Measurement>& set);
// Throws MeasuredError naming both counts when the set has fewer distinct points than `nparams`: such
// a fit passes through every point (0% error) whatever the parameters mean (calibrate() checks it).
void checkDetermined(const std::vector<Measurement>& fitSet, std::size_t nparams);
double getParam(const TopologySpec& spec, const std::string& name);  // throws TopologyError
void setParam(TopologySpec& spec, const std::string& name, double value);

// Predicted time of one measured point on a topology (replay of the plan).
Micros predictPoint(const TopologySpec& spec, const Measurement& m, const MeasuredPoint& pt, std::int64_t sliceBytes);
std::vector<PointError> evaluate(const TopologySpec& spec, const std::vector<Measurement>& set, std::int64_t sliceBytes);

// Largest rank count of a measured file calibrate takes: it replays every point at every step of the
// fit, and the replay's cost grows faster than the square of the ranks (4 sizes up to 16 MiB on the
// host topology, a loaded 2-core machine: 8 ranks 0.4 s, 16 ranks 1.8 s, 64 ranks 88 s). A file of
// more ranks is refused before the fit starts (the simulator's other commands replay up to kMaxReplayRanks).
inline constexpr int kMaxCalibrateRanks = 64;

// Throws MeasuredError naming the file unless every file of the set names its collective and has at most
// kMaxCalibrateRanks ranks.
void checkCalibrateInput(const std::vector<Measurement>& set);

// Replays of every point one fit of `nparams` parameters makes at most: per start (three) one
// evaluation, then per iteration a Jacobian (nparams) and up to maxRejectedSteps trial steps; then the
// fitted topology's. An upper bound: a fit usually stops well before maxIterations.
std::int64_t replaysPerFit(std::size_t nparams, const CalibrationOptions& options);
// Adds to `work` (replay_work.h) the replays a calibration makes at most: every fitted point before
// the fit, in the fit and in each of `folds` cross-validation fits (a fold fits fewer points: counted
// as all), and every checked point once.
void addCalibrationWork(const TopologySpec& spec, const std::vector<Measurement>& fitSet, const std::vector<Measurement>& checkSet,
                        const CalibrationOptions& options, std::size_t folds, ReplayWork& work);

CalibrationResult calibrate(const TopologySpec& initial, const std::vector<Measurement>& fitSet,
                            const std::vector<Measurement>& checkSet, const CalibrationOptions& options = {});

}  // namespace cclab::sim
