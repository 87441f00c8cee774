#include "trainer/report/run_info.h"

#include <unistd.h>

#include <array>
#include <ctime>
#include <thread>

namespace cclab::trainer {

RunInfo currentRunInfo(std::string commandLine) {
  RunInfo info;
  info.commandLine = std::move(commandLine);
  constexpr std::size_t kHostNameBytes = 256;  // HOST_NAME_MAX is 64 on Linux
  std::array<char, kHostNameBytes> host{};
  if (gethostname(host.data(), host.size() - 1) == 0) info.host = host.data();
  info.cores = std::thread::hardware_concurrency();
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  constexpr std::size_t kDateBytes = sizeof("2026-01-01T00:00:00Z");
  std::array<char, kDateBytes> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  info.dateUtc = buf.data();
  return info;
}

}  // namespace cclab::trainer
