// The human summary on stdout, and the per-epoch progress line on stderr.
#pragma once

#include <ostream>
#include <string>

#include "trainer/metrics/records.h"
#include "trainer/metrics/summary.h"
#include "trainer/report/run_info.h"
#include "trainer/run/train_config.h"

namespace cclab::trainer {

void printHeader(std::ostream& out, const TrainConfig& config, const std::string& dataName, const RunInfo& info);
void printProgress(std::ostream& out, const EpochRecord& epoch, int epochs);
void printSummary(std::ostream& out, const TrainConfig& config, const RunResult& run, const Summary& summary);

}  // namespace cclab::trainer
