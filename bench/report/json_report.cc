#include "bench/report/json_report.h"

#include <fstream>
#include <stdexcept>

#include "bench/report/usage_error.h"

namespace cclab::bench {
namespace {

nlohmann::json toJson(const Measurement& m) {
  nlohmann::json j = {{"time_us", m.timeUs}, {"algbw", m.algBw}, {"busbw", m.busBw}};
  j["wrong"] = m.wrong ? nlohmann::json(*m.wrong) : nlohmann::json(nullptr);
  return j;
}

}  // namespace

nlohmann::json toJson(const RunInfo& info, const ResultLog& log) {
  nlohmann::json results = nlohmann::json::array();
  for (const ResultRow& r : log.rows())
    results.push_back({{"size", r.sizeBytes},
                       {"count", r.count},
                       {"type", r.type},
                       {"redop", r.redop},
                       {"root", r.root},
                       {"oop", toJson(r.outOfPlace)},
                       {"ip", toJson(r.inPlace)}});
  return {{"collective", info.collective},
          {"backend", info.backend},
          {"algo", info.algo},
          {"nranks", info.nranks},
          {"type", info.type},
          {"op", info.op},
          {"machine", {{"hostname", info.machine.hostname}, {"cpu", info.machine.cpuModel}, {"cpus", info.machine.cpus}}},
          {"date", info.date},
          {"command", info.command},
          {"settings", info.settings},
          {"results", results},
          {"avg_busbw", log.avgBusBw()}};
}

JsonReportFile::JsonReportFile(std::string path) : path_(std::move(path)) {
  std::ofstream probe(path_, std::ios::trunc);
  if (!probe) throw UsageError("cannot write JSON file '" + path_ + "'");
}

void JsonReportFile::write(const RunInfo& info, const ResultLog& log) const {
  std::ofstream out(path_, std::ios::trunc);
  out << toJson(info, log).dump(2) << "\n";
  if (!out) throw std::runtime_error("cannot write JSON file '" + path_ + "'");
}

}  // namespace cclab::bench
