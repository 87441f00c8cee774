// Where and when a run happened, recorded with its results.
#pragma once

#include <string>

namespace cclab::trainer {

struct RunInfo {
  std::string commandLine;
  std::string host;
  unsigned cores = 0;
  std::string dateUtc;  // ISO 8601
};

RunInfo currentRunInfo(std::string commandLine);

}  // namespace cclab::trainer
