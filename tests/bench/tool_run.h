// Runs a tool of build/bin as a child process and captures its stdout, stderr and exit status.
#pragma once

#include <string>
#include <vector>

namespace cclab::bench::testing {

struct ToolRun {
  int status = -1;  // exit status; 128+signal when killed
  std::string out;
  std::string err;
};

std::string binPath(const std::string& tool);  // CCLAB_BIN_DIR/tool
// argv[0] is the tool's name; extra environment as "NAME=VALUE".
ToolRun runTool(const std::string& tool, const std::vector<std::string>& args, const std::vector<std::string>& env = {});
// Runs an arbitrary program found on PATH (e.g. mpirun) with the same capture.
ToolRun runProgram(const std::string& program, const std::vector<std::string>& args, const std::vector<std::string>& env = {});
bool onPath(const std::string& program);

std::vector<std::string> linesOf(const std::string& text);  // without the newlines; no empty last line
std::string tempPath(const std::string& name);             // a fresh file name under the test's temp dir

}  // namespace cclab::bench::testing
