// The shared results JSON (results_json.h).
#include "collectives/conventions/results_json.h"

#include "collectives/conventions/output_file.h"

namespace cclab::conventions {
namespace {

nlohmann::json measurementJson(const Measurement& m) {
  nlohmann::json j = {{"time_us", m.timeUs}, {"algbw", m.algBw}, {"busbw", m.busBw}};
  j["wrong"] = m.wrong ? nlohmann::json(*m.wrong) : nlohmann::json(nullptr);
  return j;
}

}  // namespace

nlohmann::json resultsJson(const RunDescription& run, const ResultLog& log) {
  nlohmann::json results = nlohmann::json::array();
  for (const ResultRow& r : log.rows())
    results.push_back({{"size", r.sizeBytes},
                       {"count", r.count},
                       {"type", r.type},
                       {"redop", r.redop},
                       {"root", r.root},
                       {"oop", measurementJson(r.outOfPlace)},
                       {"ip", measurementJson(r.inPlace)}});
  return {{"collective", run.collective}, {"backend", run.backend}, {"algo", run.algo},
          {"nranks", run.nranks},         {"type", run.type},       {"op", run.op},
          {"results", results},           {"avg_busbw", log.avgBusBw()}};
}

void writeJsonFile(const std::filesystem::path& path, const nlohmann::json& doc) {
  writeFileAtomically(path, doc.dump(2) + "\n");
}

}  // namespace cclab::conventions
