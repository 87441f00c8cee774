#include "sim/compare.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace cclab::sim {
namespace {

using plan::Collective;

std::vector<SimAlgorithm> candidates(const Topology& topo, Collective c, const CompareOptions& o) {
  if (!o.algorithms.empty()) return o.algorithms;
  std::vector<SimAlgorithm> out;
  const bool cluster = topo.spec().kind == TopologyKind::Cluster;
  for (SimAlgorithm a : {SimAlgorithm::Ring, SimAlgorithm::Tree}) {
    try {
      checkAlgorithm(c, a, cluster);
      out.push_back(a);
    } catch (const InvalidArgument&) {
      // no plan of this algorithm for c
    }
  }
  const auto kind = topo.spec().kind;
  if (c == Collective::AllReduce && topo.spec().nvlsBandwidth > 0 && (kind == TopologyKind::Switch || kind == TopologyKind::Cluster))
    out.push_back(SimAlgorithm::Nvls);
  return out;
}

ProtocolChoice forced(Protocol p) {
  switch (p) {
    case Protocol::LL:
      return ProtocolChoice::LL;
    case Protocol::LL128:
      return ProtocolChoice::LL128;
    case Protocol::Simple:
      return ProtocolChoice::Simple;
    case Protocol::None:
      break;
  }
  return ProtocolChoice::Auto;
}

bool reducing(Collective c) { return c == Collective::AllReduce || c == Collective::ReduceScatter || c == Collective::Reduce; }

// The algorithms a run is predicted with; throws when the run does not fit the topology or has none.
std::vector<SimAlgorithm> algorithmsFor(const Topology& topo, const NcclTestsRun& run, const CompareOptions& o) {
  if (run.nranks != topo.nranks())
    throw InvalidArgument(fmt::format("{}: the run has {} ranks, topology '{}' has {} (give --nodes, -g or another --topo)", run.source,
                                      run.nranks, topo.spec().name, topo.nranks()));
  auto algos = candidates(topo, run.collective, o);
  if (algos.empty()) throw InvalidArgument(fmt::format("{}: no algorithm to predict {} with", run.source, plan::name(run.collective)));
  return algos;
}

// The prediction of one row (its type and root), in the model asked.
Predictor rowPredictor(const Topology& topo, const NcclTestsRow& r, const CompareOptions& o) {
  return {.topo = topo, .model = o.model, .sliceBytes = o.sliceBytes, .elemSize = elemSizeOf(r.type), .root = std::max(0, r.root),
          .protocol = o.protocol};
}

}  // namespace

void addCompareWork(const Topology& topo, const NcclTestsRun& run, const CompareOptions& o, ReplayWork& work) {
  const auto algos = algorithmsFor(topo, run, o);
  for (const NcclTestsRow& r : run.rows)
    for (SimAlgorithm a : algos) work.add(rowPredictor(topo, r, o), run.collective, a, run.nranks, r.count);
}

std::vector<CompareRow> compareRun(const Topology& topo, const NcclTestsRun& run, const CompareOptions& o) {
  const auto algos = algorithmsFor(topo, run, o);
  // The same topology with free reductions, for the reduction term.
  TopologySpec freeSpec = topo.spec();
  freeSpec.compute.reduceBandwidth = 0;
  const Topology freeTopo(freeSpec);
  std::vector<CompareRow> rows;
  for (const NcclTestsRow& r : run.rows) {
    const std::int64_t e = elemSizeOf(r.type);
    const Predictor predict = rowPredictor(topo, r, o);
    Prediction best{std::numeric_limits<Micros>::infinity(), Protocol::None};
    SimAlgorithm bestAlgo = algos.front();
    for (SimAlgorithm a : algos) {
      const Prediction p = predict.predict(run.collective, a, run.nranks, r.count);
      if (p.time < best.time) {
        best = p;
        bestAlgo = a;
      }
    }
    // The terms from the analytic form of the chosen algorithm on its protocol.
    const ProtocolChoice pc = forced(best.protocol);
    const Predictor closed{
        .topo = topo, .model = Model::Analytic, .sliceBytes = o.sliceBytes, .elemSize = e, .root = std::max(0, r.root), .protocol = pc};
    const Predictor closedFree{
        .topo = freeTopo, .model = Model::Analytic, .sliceBytes = o.sliceBytes, .elemSize = e, .root = std::max(0, r.root), .protocol = pc};
    const bool perRank = run.collective == Collective::AllGather || run.collective == Collective::ReduceScatter;
    const std::int64_t smallest = perRank ? 1 : run.nranks;
    const Micros whole = closed(run.collective, bestAlgo, run.nranks, r.count);
    const Micros latency = std::min(whole, closed(run.collective, bestAlgo, run.nranks, smallest));
    const Micros withoutReduce = reducing(run.collective) ? closedFree(run.collective, bestAlgo, run.nranks, r.count) : whole;
    CompareRow base;
    base.source = run.source;
    base.run = run.index;
    base.collective = run.collective;
    base.nranks = run.nranks;
    base.size = r.size;
    base.type = r.type;
    base.predicted = best.time;
    base.algorithm = std::string(name(bestAlgo));
    base.protocol = best.protocol;
    base.latency = latency;
    base.reduction = std::max(0.0, whole - withoutReduce);
    base.bandwidth = std::max(0.0, whole - base.reduction - latency);
    base.dominant = base.latency >= base.bandwidth && base.latency >= base.reduction ? "latency"
                    : base.bandwidth >= base.reduction                               ? "bandwidth"
                                                                                     : "reduction";
    for (const bool ip : {false, true}) {
      const Micros measured = ip ? r.ipTime : r.oopTime;
      if (measured <= 0) continue;
      CompareRow row = base;
      row.inPlace = ip;
      row.measured = measured;
      row.error = (row.predicted - measured) / measured;
      rows.push_back(row);
    }
  }
  return rows;
}

std::vector<CompareSummary> summarizeByCollective(const std::vector<CompareRow>& rows) {
  std::map<Collective, std::pair<std::vector<double>, int>> logs;
  for (const auto& r : rows) {
    auto& [v, n] = logs[r.collective];
    v.push_back(std::log(r.predicted / r.measured));
    ++n;
  }
  std::vector<CompareSummary> out;
  for (const auto& [c, vn] : logs) {
    double sum = 0, abs = 0;
    for (double x : vn.first) {
      sum += x;
      abs += std::fabs(x);
    }
    const double n = static_cast<double>(vn.first.size());
    out.push_back({c, vn.second, std::exp(sum / n), std::exp(abs / n) - 1});
  }
  return out;
}

}  // namespace cclab::sim
