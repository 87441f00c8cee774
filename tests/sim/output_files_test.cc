// cclab-sim's output files go through the atomic writer: --trace and calibrate's -o (saveTopologyFile)
// refuse a target that is not a regular file, and a write that fails part-way (a full disk, made here
// with a file-size limit: write() fails with EFBIG as it would with ENOSPC) exits non-zero with one
// line and keeps the old file. They used to write through an unchecked ofstream: a truncated file,
// the old one lost, exit 0 and "wrote ...".
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/presets.h"
#include "sim/topology_json.h"
#include "tests/support/shell_run.h"
#include "tests/support/temp_dir.h"

namespace {

namespace fs = std::filesystem;

using cclab::testing::entries;
using cclab::testing::slurp;

struct TempDir : cclab::testing::TempDir {
  TempDir() : cclab::testing::TempDir("cclab-sim-out") {}
};

using SimRun = cclab::testing::CommandRun;

// `prefix` runs in the shell before cclab-sim (e.g. a ulimit).
SimRun sim(const std::string& args, const std::string& prefix = "") {
  return cclab::testing::runShell(prefix + " exec " + std::string(CCLAB_SIM_BIN) + " " + args);
}

// 512-byte blocks: a 4 KiB limit, far below the 4M run's trace; SIGXFSZ ignored so write() fails.
const std::string kFullDisk = "ulimit -f 8; trap '' XFSZ;";

TEST(SimOutputFiles, ATraceOnAFullDiskFailsAndKeepsTheOldFile) {
  TempDir d;
  const fs::path trace = d.path / "t.json";
  std::ofstream(trace) << "old";
  const SimRun r = sim("allreduce -e 4M --trace " + trace.string(), kFullDisk);
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("cannot write '" + trace.string() + "'"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("wrote trace"), std::string::npos) << r.output;
  EXPECT_EQ(slurp(trace), "old");
  EXPECT_EQ(entries(d.path), 1U) << "no temporary file left behind";
  // Without the limit the same command writes the whole trace.
  const SimRun ok = sim("allreduce -e 4M --trace " + trace.string());
  ASSERT_EQ(ok.status, 0) << ok.output;
  EXPECT_EQ(slurp(trace).rfind("{\"", 0), 0U);
}

TEST(SimOutputFiles, ATraceOntoAFifoIsRefusedBeforeTheWork) {
  TempDir d;
  const fs::path fifo = d.path / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const SimRun r = sim("allreduce -e 4M --trace " + fifo.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--trace '" + fifo.string() + "': is a FIFO, not a regular file"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
}

// A file-size limit alone (`ulimit -f`, SIGXFSZ at its default): the write fails like a full disk,
// exit 1 with one line, the old file kept, no temporary left. It used to kill cclab-sim by SIGXFSZ
// (exit 153, nothing printed) and leave ".t.json.tmp.*" behind.
TEST(SimOutputFiles, AFileSizeLimitFailsInOneLineAndKeepsTheOldFile) {
  TempDir d;
  const fs::path trace = d.path / "t.json";
  std::ofstream(trace) << "old";
  const SimRun r = sim("allreduce -e 4M --trace " + trace.string(), "ulimit -f 8; trap - XFSZ;");
  EXPECT_EQ(r.status, 1) << r.output;  // the table on stdout, then one line on stderr
  const std::size_t line = r.output.find("cclab-sim: error");
  EXPECT_EQ(r.output.substr(line), "cclab-sim: error: cannot write '" + trace.string() + "': File too large\n") << r.output;
  EXPECT_EQ(slurp(trace), "old");
  EXPECT_EQ(entries(d.path), 1U) << "no temporary file left behind";
}

// Two outputs of one command naming one file (the same path, "./x", a symlink, a hard link) are
// refused before the work with one line, exit 2, and the file is left alone. They used to exit 0,
// one output silently replacing the other.
TEST(SimOutputFiles, TwoOutputsNamingOneFileAreRefusedBeforeTheWork) {
  TempDir d;
  const fs::path x = d.path / "x.json";
  std::ofstream(x) << "old";
  fs::create_symlink(x, d.path / "link.json");
  fs::create_hard_link(x, d.path / "hard.json");
  for (const fs::path& other : {x, d.path / "." / "x.json", d.path / "link.json", d.path / "hard.json"}) {
    const SimRun r = sim("allreduce -b 1M -e 1M -J " + x.string() + " --trace " + other.string());
    EXPECT_EQ(r.status, 2) << other << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_NE(r.output.find("-J '" + x.string() + "' and --trace '" + other.string() + "' name the same file"), std::string::npos)
        << r.output;
  }
  // calibrate's -o and -J.
  const fs::path measured = d.path / "m.json";
  std::ofstream(measured) << R"({"collective":"allreduce","algo":"ring","nranks":4,"results":[)"
                             R"({"size":1024,"oop":{"time_us":12}},{"size":65536,"oop":{"time_us":40}}]})";
  const SimRun cal = sim("calibrate --measured " + measured.string() + " --topo host --no-cv -o " + x.string() + " -J " +
                         (d.path / "hard.json").string());
  EXPECT_EQ(cal.status, 2) << cal.output;
  EXPECT_NE(cal.output.find("name the same file"), std::string::npos) << cal.output;
  EXPECT_EQ(slurp(x), "old");
  EXPECT_EQ(entries(d.path), 4U) << "nothing written";
  // Distinct files are written as before.
  const SimRun ok = sim("allreduce -b 1M -e 1M -J " + (d.path / "r.json").string() + " --trace " + (d.path / "t.json").string());
  EXPECT_EQ(ok.status, 0) << ok.output;
}

// Replacing an output keeps its mode (it came back 0644); a new output is 0644.
TEST(SimOutputFiles, AReplacedOutputKeepsItsMode) {
  TempDir d;
  const fs::path json = d.path / "r.json";
  ASSERT_EQ(sim("allreduce -b 1M -e 1M -J " + json.string()).status, 0);
  EXPECT_EQ(fs::status(json).permissions(), fs::perms(0644));
  fs::permissions(json, fs::perms(0640));
  ASSERT_EQ(sim("allreduce -b 1M -e 1M -J " + json.string()).status, 0);
  EXPECT_EQ(fs::status(json).permissions(), fs::perms(0640));
  EXPECT_NE(slurp(json).find("\"collective\""), std::string::npos);
}

// calibrate -o writes with saveTopologyFile.
TEST(SimOutputFiles, ASavedTopologyIsWholeOrNotWritten) {
  TempDir d;
  const auto spec = cclab::sim::findPreset("dgx-h100");
  ASSERT_TRUE(spec);
  const fs::path out = d.path / "topo.json";
  cclab::sim::saveTopologyFile(*spec, out.string());
  const std::string whole = slurp(out);
  ASSERT_GT(whole.size(), 100U);
  const fs::path fifo = d.path / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_ANY_THROW(cclab::sim::saveTopologyFile(*spec, fifo.string()));
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a full disk, in a child so the limit stays there
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{64, 64};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      cclab::sim::saveTopologyFile(*spec, out.string());
    } catch (const std::exception&) {
      ::_exit(0);
    }
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the failed write was not reported";
  EXPECT_EQ(slurp(out), whole) << "the old file was lost";
  EXPECT_EQ(entries(d.path), 2U) << "no temporary file left behind";
}

}  // namespace
