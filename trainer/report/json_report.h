// The -J results file: schema "cclab-train/1", documented in docs/trainer.md. Field names are stable.
#pragma once

#include <filesystem>
#include <string>

#include "nlohmann/json.hpp"
#include "trainer/metrics/records.h"
#include "trainer/metrics/summary.h"
#include "trainer/report/run_info.h"
#include "trainer/run/train_config.h"

namespace cclab::trainer {

inline constexpr const char* kJsonSchema = "cclab-train/1";

nlohmann::json runToJson(const TrainConfig& config, const std::string& dataName, const RunInfo& info,
                         const RunResult& run, const Summary& summary);
// Written whole through a temporary file (conventions/output_file.h): a failure leaves the old file.
void writeJson(const std::filesystem::path& path, const nlohmann::json& j);  // throws Error

// The -J "config" object of a run (also what a baseline's config is checked against).
nlohmann::json configToJson(const TrainConfig& config, const std::string& dataName);

}  // namespace cclab::trainer
