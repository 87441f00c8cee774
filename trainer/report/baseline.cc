// readBaseline and checkBaseline: an earlier run's throughput, accepted only for a matching configuration.
#include "trainer/report/baseline.h"

#include <array>
#include <string_view>

#include "collectives/core/input_file.h"
#include "collectives/core/strict_json.h"
#include "collectives/core/errors.h"

namespace cclab::trainer {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 5> kThroughputNeutral = {"epochs", "seed", "lr", "momentum", "weight_decay"};

bool ignored(BaselineKind kind, const std::string& key) {
  for (std::string_view k : kThroughputNeutral)
    if (key == k) return true;
  if (kind == BaselineKind::Straggler) return key == "straggler";
  return key == "workers" || key == "worker_batch";
}

std::string flag(BaselineKind kind) { return kind == BaselineKind::Scaling ? "--scaling-baseline" : "--straggler-baseline"; }

}  // namespace

BaselineRun readBaseline(const std::filesystem::path& path) {
  const std::string text = readInputFile(path.string(), "baseline file " + path.string() + " (give a cclab-train -J file)");
  try {
    const json j = parseStrictJson(std::string_view(text));
    const json& s = j.at("summary");
    return {s.at("samples_per_s").get<double>(), j.at("config").at("workers").get<int>(), j.at("config")};
  } catch (const json::exception& e) {
    throw InvalidArgument("baseline file " + path.string() + " is not a cclab-train -J file: " + e.what());
  }
}

void checkBaseline(BaselineKind kind, const json& runConfig, const BaselineRun& baseline, const std::filesystem::path& path) {
  const std::string where = flag(kind) + " " + path.string() + ": ";
  for (const auto& [key, want] : runConfig.items()) {
    if (ignored(kind, key)) continue;
    const auto found = baseline.config.find(key);
    const std::string got = found == baseline.config.end() ? std::string("(missing)") : found->dump();
    if (found == baseline.config.end() || *found != want)
      throw InvalidArgument(where + "its " + key + " " + got + " differs from this run's " + want.dump() +
                            (kind == BaselineKind::Scaling ? " (a scaling baseline is the same run with fewer workers)"
                                                           : " (a straggler baseline is the same run without --straggler)"));
  }
  if (kind == BaselineKind::Straggler && !baseline.config.value("straggler", json(nullptr)).is_null())
    throw InvalidArgument(where + "it has a straggler itself (" + baseline.config.at("straggler").dump() + ")");
  if (kind == BaselineKind::Scaling && baseline.workers > runConfig.at("workers").get<int>())
    throw InvalidArgument(where + "it has " + std::to_string(baseline.workers) + " workers, more than this run's " +
                          runConfig.at("workers").dump());
  if (baseline.samplesPerS <= 0) throw InvalidArgument(where + "its samples_per_s is not positive");
}

}  // namespace cclab::trainer
