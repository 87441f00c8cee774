// The predicted table and JSON of cclab-sim (report.h), through collectives/conventions.
#include "sim/report.h"

#include <optional>

#include <fmt/format.h>

#include "collectives/conventions/bandwidth.h"
#include "collectives/conventions/results_json.h"
#include "collectives/conventions/size.h"
#include "collectives/conventions/sweep.h"
#include "collectives/conventions/table.h"

namespace cclab::sim {

PredictedRow makeRow(plan::Collective c, int nranks, Bytes size, std::int64_t elemSize, Micros time) {
  constexpr double kMicrosPerSecond = 1e6;
  const conventions::Bandwidth bw = conventions::bandwidthOf(c, nranks, size, time / kMicrosPerSecond);
  return {size, size / elemSize, time, bw.algBw, bw.busBw};
}

namespace {

conventions::ResultLog resultLog(const PredictedRun& run) {
  conventions::ResultLog log;
  for (const auto& r : run.rows) {
    const conventions::Measurement m{r.time, r.algbw, r.busbw, std::nullopt};
    log.add({r.size, r.count, run.type, run.redop, run.root, m, m});
  }
  return log;
}

const conventions::TableStyle kPredictedStyle{{"predicted"}, "-", true};

}  // namespace

std::string formatTable(const PredictedRun& run) {
  const conventions::Table table(kPredictedStyle);
  const conventions::ResultLog log = resultLog(run);
  std::string out = conventions::Table::headerLine(
      fmt::format("cclab-sim: PREDICTED ({}) {} algo={} nranks={} topology={} slice={} protocol={}", run.model,
                  plan::name(run.collective), run.algo, run.nranks, run.topology,
                  run.sliceBytes > 0 ? humanBytes(run.sliceBytes) : run.sliceBytes == 0 ? "auto" : "whole-op",
                  name(run.protocol)));
  out += conventions::Table::headerLine("");
  out += table.columnHeader();
  for (const auto& r : log.rows()) out += table.row(r);
  out += table.footer(log);
  // Runs of sizes that took the same protocol, in row order.
  std::string ranges;
  for (std::size_t i = 0; i < run.rows.size();) {
    std::size_t j = i;
    while (j + 1 < run.rows.size() && run.rows[j + 1].protocol == run.rows[i].protocol) ++j;
    if (run.rows[i].protocol != Protocol::None) {
      ranges += fmt::format("{}{} {}", ranges.empty() ? "" : ", ", name(run.rows[i].protocol), humanBytes(run.rows[i].size));
      if (j > i) ranges += ".." + humanBytes(run.rows[j].size);
    }
    i = j + 1;
  }
  if (!ranges.empty()) out += "# protocol per call: " + ranges + "\n";
  return out;
}

nlohmann::json toJson(const PredictedRun& run) {
  const conventions::RunDescription d{std::string(plan::name(run.collective)), "sim", run.algo, run.nranks, run.type,
                                      run.redop};
  nlohmann::json doc = conventions::resultsJson(d, resultLog(run));
  doc["predicted"] = true;
  doc["model"] = run.model;
  doc["topology"] = run.topology;
  doc["slice_bytes"] = run.sliceBytes;
  doc["protocol"] = name(run.protocol);
  for (std::size_t i = 0; i < run.rows.size() && i < doc["results"].size(); ++i)
    doc["results"][i]["protocol"] = name(run.rows[i].protocol);
  doc["machine"] = "cclab-sim";
  return doc;
}

std::string humanBytes(Bytes b) {
  static const char* units[] = {"B", "K", "M", "G", "T"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return v == static_cast<double>(static_cast<Bytes>(v)) ? fmt::format("{}{}", static_cast<Bytes>(v), units[u])
                                                         : fmt::format("{:.1f}{}", v, units[u]);
}

Bytes parseBytes(const std::string& s, std::string_view flag) { return conventions::parseSize(s, flag); }

std::vector<Bytes> sizeSweep(const std::string& minBytes, const std::string& maxBytes, const std::string& factor,
                             const std::string& increment) {
  conventions::SweepOptions sweep;
  sweep.minBytes = parseBytes(minBytes, "-b/--minbytes");
  sweep.maxBytes = parseBytes(maxBytes, "-e/--maxbytes");
  sweep.stepBytes = parseBytes(increment, "-i/--stepbytes");
  sweep.stepFactor = sweep.stepBytes > 0 ? 1 : conventions::parseStepFactor(factor, "-f/--stepfactor");
  return conventions::sweepSizes(sweep);
}

}  // namespace cclab::sim
