// The *_perf tools' output file and environment knobs, run as processes: -J onto something that is
// not a regular file is refused and left as it was, -J through a symlink writes the linked file,
// --help-env lists every knob, and a bad knob is one line and exit 2 before anything runs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "bench/report/usage_error.h"
#include "collectives/core/knobs.h"
#include "tool_run.h"

namespace cclab::bench::testing {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kSmallRun{"--backend", "host", "-g", "2", "-b", "8", "-e", "8", "-w", "0", "-n", "1"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(PerfOutputFile, AFifoOrADeviceNodeIsRefusedAndLeftUntouched) {
  const fs::path dir = tempPath("targets");
  fs::create_directories(dir);
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ToolRun run = runTool("all_reduce_perf", with(kSmallRun, {"-J", fifo.string()}));
  EXPECT_EQ(run.status, kExitUsage) << run.err;
  EXPECT_NE(run.err.find("is a FIFO, not a regular file"), std::string::npos) << run.err;
  EXPECT_EQ(linesOf(run.err).size(), 1U) << run.err;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  // A copy of /dev/full made here (never the real /dev): renaming over it used to replace the device.
  const fs::path full = dir / "full";
  if (::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) GTEST_SKIP() << "mknod refused here (no CAP_MKNOD)";
  run = runTool("all_reduce_perf", with(kSmallRun, {"-J", full.string()}));
  EXPECT_EQ(run.status, kExitUsage) << run.err;
  EXPECT_NE(run.err.find("is a character device"), std::string::npos) << run.err;
  struct stat st {};
  ASSERT_EQ(::lstat(full.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node was replaced";
}

TEST(PerfOutputFile, ASymlinkIsWrittenThrough) {
  const fs::path dir = tempPath("symlink");
  fs::create_directories(dir);
  const fs::path real = dir / "real.json", link = dir / "link.json";
  std::ofstream(real) << "old";
  fs::create_symlink(real, link);
  const ToolRun run = runTool("all_reduce_perf", with(kSmallRun, {"-J", link.string()}));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(fs::is_symlink(link));
  std::ifstream f(real);
  std::stringstream s;
  s << f.rdbuf();
  EXPECT_EQ(s.str().rfind("{", 0), 0U) << "the linked file holds the JSON";
}

// Under a file-size limit (`ulimit -f`, SIGXFSZ at its default) -J fails like a full disk: exit 1, one
// line, the old file kept, no temporary left. It used to die by SIGXFSZ (153, nothing printed).
TEST(PerfOutputFile, AFileSizeLimitFailsInOneLineAndKeepsTheOldFile) {
  const fs::path dir = tempPath("fsize");
  fs::create_directories(dir);
  const fs::path json = dir / "r.json";
  std::ofstream(json) << "old";
  std::string cmd = "trap - XFSZ; ulimit -f 1; exec " + binPath("all_reduce_perf");
  for (const std::string& a : with(kSmallRun, {"-J", json.string()})) cmd += " " + a;
  const ToolRun run = runProgram("sh", {"-c", cmd});
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_EQ(linesOf(run.err).size(), 1U) << run.err;
  EXPECT_NE(run.err.find("all_reduce_perf: error: cannot write '" + json.string() + "': File too large"), std::string::npos) << run.err;
  std::ifstream f(json);
  std::stringstream s;
  s << f.rdbuf();
  EXPECT_EQ(s.str(), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), {}), 1) << "no temporary file left behind";
}

// Under mpirun the same limit meets the process backend's shared segments first (1 GiB each, made with
// ftruncate): every rank fails in one line and removes its segments on the normal error path. They used
// to die by SIGXFSZ, leaving /dev/shm/cclab-* until a later run swept them.
TEST(PerfOutputFile, AFileSizeLimitUnderMpirunFailsInOneLineAndLeavesNoSegments) {
  if (!onPath("mpirun")) GTEST_SKIP() << "no mpirun on PATH";
  std::string cmd = "trap - XFSZ; ulimit -f 20000; exec timeout -s KILL 60 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 " +
                    binPath("all_reduce_perf") + " --backend proc -b 8 -e 8 -w 0 -n 1";
  const ToolRun run = runProgram("sh", {"-c", cmd}, {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"});
  EXPECT_NE(run.status, 0) << run.err;
  EXPECT_NE(run.status, 128 + 25) << "killed by SIGXFSZ: " << run.err;
  const std::string said = "all_reduce_perf: error: proc: ftruncate('/";
  const std::size_t at = run.err.find(said);
  ASSERT_NE(at, std::string::npos) << run.err;
  EXPECT_NE(run.err.find("File too large"), std::string::npos) << run.err;
  // The job's segments: /dev/shm/cclab-<job>n<node>-...; none may be left.
  const std::string name = run.err.substr(at + said.size());
  const std::string job = name.substr(0, name.find("n0-"));
  ASSERT_EQ(job.rfind("cclab-", 0), 0U) << name;
  for (const auto& e : fs::directory_iterator("/dev/shm"))
    EXPECT_NE(e.path().filename().string().rfind(job, 0), 0U) << e.path() << " left behind";
}

TEST(PerfKnobs, HelpEnvListsEveryKnob) {
  for (const char* tool : {"all_reduce_perf", "reduce_scatter_perf", "broadcast_perf"}) {
    const ToolRun run = runTool(tool, {"--help-env"});
    ASSERT_EQ(run.status, 0) << tool << ": " << run.err;
    for (const knobs::Knob& k : knobs::kTable)
      EXPECT_NE(run.out.find(std::string(k.name)), std::string::npos) << tool << " --help-env lacks " << k.name;
  }
  EXPECT_NE(runTool("all_reduce_perf", {"--help"}).out.find("--help-env"), std::string::npos);
}

TEST(PerfKnobs, ABadValueIsOneLineAndExit2AtStart) {
  for (const auto& [setting, name] : {std::pair{"CCLAB_PROC_SHM_BYTES=junk", "CCLAB_PROC_SHM_BYTES='junk'"},
                                      std::pair{"CCLAB_PROC_SHM_BYTES=2X", "CCLAB_PROC_SHM_BYTES='2X'"},
                                      std::pair{"CCLAB_RANKS_PER_NODE=junk", "CCLAB_RANKS_PER_NODE='junk'"},
                                      std::pair{"CCLAB_PROC_TRANSPORT=tcp", "CCLAB_PROC_TRANSPORT='tcp'"},
                                      std::pair{"CCLAB_LL_GATHER=yes", "CCLAB_LL_GATHER='yes'"},
                                      std::pair{"CCLAB_EXPECT_GPU=2", "CCLAB_EXPECT_GPU='2'"}}) {
    const ToolRun run = runTool("all_reduce_perf", kSmallRun, {setting});
    EXPECT_EQ(run.status, kExitUsage) << setting << ": " << run.err;
    ASSERT_EQ(linesOf(run.err).size(), 1U) << run.err;
    EXPECT_NE(run.err.find(name), std::string::npos) << run.err;
    EXPECT_TRUE(run.out.empty()) << "refused before the header: " << run.out;
  }
  // Sizes take suffixes: 2G is two gibibytes (the old reader took it as 2 bytes).
  EXPECT_EQ(runTool("all_reduce_perf", kSmallRun, {"CCLAB_PROC_SHM_BYTES=2G"}).status, 0);
}

}  // namespace
}  // namespace cclab::bench::testing
