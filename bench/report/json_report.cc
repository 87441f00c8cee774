// bench's results JSON (json_report.h): the shared schema plus machine, date, command and settings.
#include "bench/report/json_report.h"

#include "bench/report/usage_error.h"
#include "collectives/conventions/output_file.h"
#include "collectives/core/errors.h"

namespace cclab::bench {

nlohmann::json toJson(const RunInfo& info, const ResultLog& log) {
  nlohmann::json doc = conventions::resultsJson(info, log);
  doc["machine"] = {{"hostname", info.machine.hostname}, {"cpu", info.machine.cpuModel}, {"cpus", info.machine.cpus}};
  doc["date"] = info.date;
  doc["command"] = info.command;
  doc["settings"] = info.settings;
  if (!info.arrivals.is_null()) doc["arrivals"] = info.arrivals;
  return doc;
}

JsonReportFile::JsonReportFile(std::string path) : path_(std::move(path)) {
  try {
    conventions::checkWritable(path_, "-J");
  } catch (const InvalidArgument& e) {
    throw UsageError(e.what());
  }
}

void JsonReportFile::write(const RunInfo& info, const ResultLog& log) const {
  conventions::writeJsonFile(path_, toJson(info, log));
}

}  // namespace cclab::bench
