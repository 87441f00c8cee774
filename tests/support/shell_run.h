// Test helper: runs a command line under /bin/sh and returns its exit status and its output (stdout
// and stderr joined), for tests that check a tool's exit code and its one-line messages.
#pragma once

#include <sys/wait.h>

#include <cstddef>
#include <cstdio>
#include <string>

namespace cclab::testing {

struct CommandRun {
  int status = -1;  // the exit code; -1 when the command could not start or did not exit normally
  std::string output;
};

inline CommandRun runShell(const std::string& command) {
  CommandRun r;
  FILE* f = popen((command + " 2>&1").c_str(), "r");
  if (!f) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) r.output.append(buf, n);
  const int st = pclose(f);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace cclab::testing
