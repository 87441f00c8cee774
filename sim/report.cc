#include "sim/report.h"

#include <cctype>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/analytic.h"

namespace cclab::sim {

PredictedRow makeRow(plan::Collective c, int nranks, Bytes size, std::int64_t elemSize, Micros time) {
  PredictedRow r;
  r.size = size;
  r.count = size / elemSize;
  r.time = time;
  r.algbw = algBandwidth(size, time);
  r.busbw = r.algbw * busBandwidthFactor(c, nranks);
  return r;
}

std::string formatTable(const PredictedRun& run) {
  std::string out;
  out += fmt::format("# cclab-sim: PREDICTED ({}) {} algo={} nranks={} topology={} slice={}\n", run.model,
                     plan::name(run.collective), run.algo, run.nranks, run.topology,
                     run.sliceBytes > 0 ? humanBytes(run.sliceBytes) : run.sliceBytes == 0 ? "auto" : "whole-op");
  out += "#\n";
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>9}  {:>7}  {:>7}  {:>6}\n", "", "", "", "", "",
                     "predicted", "", "", "");
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>9}  {:>7}  {:>7}  {:>6}\n", "size", "count", "type",
                     "redop", "root", "time", "algbw", "busbw", "#wrong");
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>9}  {:>7}  {:>7}  {:>6}\n", "(B)", "(elements)", "",
                     "", "", "(us)", "(GB/s)", "(GB/s)", "");
  for (const auto& r : run.rows)
    out += fmt::format("  {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>9.2f}  {:>7.2f}  {:>7.2f}  {:>6}\n", r.size, r.count,
                       run.type, run.redop, run.root, r.time, r.algbw, r.busbw, "-");
  double avg = 0;
  for (const auto& r : run.rows) avg += r.busbw;
  if (!run.rows.empty()) avg /= static_cast<double>(run.rows.size());
  out += "# Out of bounds values : - (predicted, not checked)\n";
  out += fmt::format("# Avg bus bandwidth    : {:.4f} (predicted)\n#\n", avg);
  return out;
}

nlohmann::json toJson(const PredictedRun& run) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : run.rows) {
    nlohmann::json t = {{"time_us", r.time}, {"algbw", r.algbw}, {"busbw", r.busbw}, {"wrong", nullptr}};
    results.push_back({{"size", r.size}, {"count", r.count}, {"type", run.type}, {"redop", run.redop},
                       {"root", run.root}, {"oop", t}, {"ip", t}});
  }
  return {{"collective", std::string(plan::name(run.collective))},
          {"backend", "sim"},
          {"predicted", true},
          {"model", run.model},
          {"algo", run.algo},
          {"nranks", run.nranks},
          {"type", run.type},
          {"op", run.redop},
          {"topology", run.topology},
          {"slice_bytes", run.sliceBytes},
          {"machine", "cclab-sim"},
          {"results", results}};
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

Bytes parseBytes(const std::string& s) {
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(s, &pos);
  } catch (const std::exception&) {
    throw std::invalid_argument("'" + s + "' is not a size (e.g. 8, 64K, 1M, 1G)");
  }
  std::string suffix = s.substr(pos);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b') && suffix.size() > 1) suffix.pop_back();
  double mult = 1;
  if (suffix.empty() || suffix == "B" || suffix == "b") mult = 1;
  else if (suffix == "K" || suffix == "k") mult = 1024.0;
  else if (suffix == "M" || suffix == "m") mult = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g") mult = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "t") mult = 1024.0 * 1024 * 1024 * 1024;
  else throw std::invalid_argument("'" + s + "' has an unknown size suffix (use K, M, G)");
  if (v < 0) throw std::invalid_argument("'" + s + "' is negative");
  return static_cast<Bytes>(v * mult);
}

}  // namespace cclab::sim
