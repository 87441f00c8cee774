// Where and when a run happened, for table headers and JSON: hostname, CPU model, date, command.
#pragma once

#include <string>

namespace cclab::bench {

struct MachineInfo {
  std::string hostname;
  std::string cpuModel;  // /proc/cpuinfo "model name", or "unknown"
  unsigned cpus = 0;     // std::thread::hardware_concurrency()
};

MachineInfo currentMachine();
// UTC, ISO 8601: "2024-05-01T12:03:26Z".
std::string currentDateUtc();
// argv joined by spaces, each argument quoted when it holds a blank or a shell metacharacter.
std::string commandLineOf(int argc, const char* const* argv);

}  // namespace cclab::bench
