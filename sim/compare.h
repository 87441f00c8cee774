// `cclab-sim compare`: measured runs (nccl-tests logs, -J files: nccl_tests_log.h) against the
// prediction on a topology, row by row, with the error, the geometric-mean error per collective, and
// which term of the model dominates each row.
//
// Per size one prediction (in place is the same schedule as out of place), against each measured
// column. The algorithm: the fastest of the candidates by our model (default: ring and tree, plus nvls
// for allreduce on a topology with NVLS; broadcast and reduce: ring, i.e. the chain) as NCCL's tuner
// takes the fastest by its own model; or one named algorithm.
//
// The terms, from the analytic closed form of the chosen algorithm and protocol (also when the replay
// made the prediction): latency = the time of the smallest call (one element per rank: start-up and
// every step's α); reduction = what free reductions (γ = 0) would save; bandwidth = the rest. The
// dominant one is the largest.
#pragma once

#include <string>
#include <vector>

#include "sim/nccl_tests_log.h"
#include "sim/predictor.h"
#include "sim/replay_work.h"

namespace cclab::sim {

struct CompareOptions {
  Model model = Model::Analytic;
  std::vector<SimAlgorithm> algorithms;  // empty: the default candidates above
  std::int64_t sliceBytes = kAutoSlice;
  ProtocolChoice protocol = ProtocolChoice::Auto;
};

struct CompareRow {
  std::string source;
  int run = 0;
  plan::Collective collective = plan::Collective::AllReduce;
  int nranks = 0;
  Bytes size = 0;
  std::string type;
  bool inPlace = false;
  Micros measured = 0, predicted = 0;
  double error = 0;  // (predicted - measured) / measured
  std::string algorithm;
  Protocol protocol = Protocol::None;
  Micros latency = 0, bandwidth = 0, reduction = 0;  // the analytic terms (above)
  std::string dominant;                              // "latency", "bandwidth" or "reduction"
};

// Every row of one run; throws InvalidArgument when the run's rank count is not the topology's.
std::vector<CompareRow> compareRun(const Topology& topo, const NcclTestsRun& run, const CompareOptions& options);

// Adds to `work` the replays compareRun(topo, run, options) makes (every candidate for every row; none
// with the analytic model), so that a command counts them all before the first (replay_work.h). Throws
// as compareRun does for a run that does not fit the topology.
void addCompareWork(const Topology& topo, const NcclTestsRun& run, const CompareOptions& options, ReplayWork& work);

struct CompareSummary {
  plan::Collective collective = plan::Collective::AllReduce;
  int rows = 0;
  double geomeanRatio = 1;     // exp(mean log(predicted / measured))
  double geomeanAbsError = 0;  // exp(mean |log(predicted / measured)|) - 1
};
std::vector<CompareSummary> summarizeByCollective(const std::vector<CompareRow>& rows);

}  // namespace cclab::sim
