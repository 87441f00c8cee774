#include "tool_run.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace cclab::bench::testing {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ToolRun spawnAndWait(const std::string& path, const std::string& argv0, const std::vector<std::string>& args,
                     const std::vector<std::string>& env) {
  static int counter = 0;
  const std::string base = tempPath("run" + std::to_string(++counter));
  const std::string outPath = base + ".out", errPath = base + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> argvStore{argv0};
  argvStore.insert(argvStore.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argvStore) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> envStore;
  for (char** e = environ; *e; ++e) envStore.emplace_back(*e);
  envStore.insert(envStore.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : envStore) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = path.find('/') == std::string::npos
                     ? posix_spawnp(&pid, path.c_str(), &actions, nullptr, argv.data(), envp.data())
                     : posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + path);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  ToolRun run;
  run.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  run.out = slurp(outPath);
  run.err = slurp(errPath);
  return run;
}

}  // namespace

std::string binPath(const std::string& tool) { return std::string(CCLAB_BIN_DIR) + "/" + tool; }

ToolRun runTool(const std::string& tool, const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return spawnAndWait(binPath(tool), tool, args, env);
}

ToolRun runProgram(const std::string& program, const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return spawnAndWait(program, program, args, env);
}

bool onPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) lines.push_back(line);
  return lines;
}

std::string tempPath(const std::string& name) {
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "cclab-bench-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    return std::filesystem::path(tmpl);
  }();
  return (dir / name).string();
}

}  // namespace cclab::bench::testing
