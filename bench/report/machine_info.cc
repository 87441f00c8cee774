#include "bench/report/machine_info.h"

#include <unistd.h>

#include <array>
#include <ctime>
#include <fstream>
#include <thread>

namespace cclab::bench {

MachineInfo currentMachine() {
  MachineInfo m;
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) == 0) m.hostname = host.data();
  m.cpuModel = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos && colon + 2 <= line.size()) m.cpuModel = line.substr(colon + 2);
    break;
  }
  m.cpus = std::thread::hardware_concurrency();
  return m;
}

std::string currentDateUtc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf.data();
}

std::string commandLineOf(int argc, const char* const* argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.empty() || arg.find_first_of(" \t\"'$;&|<>*?()") != std::string::npos) arg = "'" + arg + "'";
    s += (i ? " " : "") + arg;
  }
  return s;
}

}  // namespace cclab::bench
