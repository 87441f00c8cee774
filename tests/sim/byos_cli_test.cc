// cclab-sim's bring-your-own-system commands end to end: topo --from-nccl, compare, calibrate on a
// nccl-tests log. Usage errors and bad files exit 2 with one line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tests/support/shell_run.h"
#include "tests/support/temp_dir.h"

namespace {

using cclab::testing::slurp;
using cclab::testing::TempDir;

using CliRun = cclab::testing::CommandRun;

CliRun run(const std::string& args) {
  return cclab::testing::runShell(std::string(CCLAB_SIM_BIN) + " " + args);
}

const std::string kData = std::string(CCLAB_SOURCE_DIR) + "/tests/sim/data/";
const std::string kDump = kData + "nccl/ibm-gx3d-h100.xml";
const std::string kLog = kData + "nccl-tests/nccl-tests-309-hgx-h100-2node.txt";

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(ByosCli, TopoFromNcclDescribesTheNode) {
  const CliRun r = run("topo --from-nccl " + kDump + " --describe");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("8 GPU(s), sm 90, NVSwitch: 450.0 GB/s NVLink per GPU; 8 NIC(s)"), std::string::npos) << r.output;
  const CliRun two = run("topo --from-nccl " + kDump + " --nodes 2");
  EXPECT_EQ(two.status, 0) << two.output;
  const auto j = nlohmann::json::parse(two.output);
  EXPECT_EQ(j["kind"], "cluster");
  EXPECT_EQ(j["nics_per_node"], 8);
}

TEST(ByosCli, BadDumpsAndLogsExitTwoInOneLine) {
  const CliRun dump = run("topo --from-nccl " + kData + "nccl/nccl-tests-256-h200-truncated.xml");
  EXPECT_EQ(dump.status, 2);
  EXPECT_EQ(lines(dump.output), 1) << dump.output;
  const CliRun log = run("compare " + kDump + " --topo dgx-h100");  // an XML file is no log
  EXPECT_EQ(log.status, 2);
  EXPECT_EQ(lines(log.output), 1) << log.output;
  const CliRun ranks = run("compare " + kLog + " --topo dgx-h100");  // 16 ranks against 8
  EXPECT_EQ(ranks.status, 2);
  EXPECT_NE(ranks.output.find("16 ranks"), std::string::npos) << ranks.output;
  EXPECT_EQ(run("topo").status, 2);
  EXPECT_EQ(run("calibrate --measured " + kLog + " --topo cluster --nodes 2").status, 2);  // --nodes is for a dump
}

TEST(ByosCli, CompareWritesTheTableAndJson) {
  const TempDir dir("cclab-byos");
  const std::string out = (dir.path / "cmp.json").string();
  const CliRun r = run("compare " + kLog + " --topo " + kDump + " --nodes 2 --algo ring -J " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("geometric-mean error factor"), std::string::npos);
  const auto j = nlohmann::json::parse(slurp(dir.path / "cmp.json"));
  EXPECT_EQ(j["command"], "compare");
  EXPECT_EQ(j["nranks"], 16);
  ASSERT_EQ(j["rows"].size(), 64u);
  EXPECT_EQ(j["rows"][0]["size"], 8);
  EXPECT_EQ(j["rows"][0]["dominant"], "latency");
  EXPECT_EQ(j["summary"][0]["rows"], 64);
}

TEST(ByosCli, CompareFitsTheClusterToEachRunsRanks) {
  // Runs of 16 and 64 ranks in one log: the dump's node copied 2 and 8 times.
  const TempDir dir("cclab-byos");
  const std::string out = (dir.path / "cmp.json").string();
  const CliRun r = run("compare " + kData + "nccl-tests/nccl-tests-309-h100-ib400-runs.txt --collective allreduce --algo ring --topo " +
                       kDump + " -J " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(slurp(dir.path / "cmp.json"));
  ASSERT_EQ(j["rows"].size(), 84u);  // 3 runs x 14 sizes x 2 columns
  EXPECT_EQ(j["rows"][0]["nranks"], 16);
  EXPECT_EQ(j["rows"][28]["nranks"], 64);
  EXPECT_NE(r.output.find("nccl:ibm-gx3d-h100x8"), std::string::npos) << r.output;
  // With --nodes fixed, a run of other ranks is refused in one line.
  const CliRun fixed = run("compare " + kData + "nccl-tests/nccl-tests-309-h100-ib400-runs.txt --collective allreduce --topo " + kDump +
                           " --nodes 2");
  EXPECT_EQ(fixed.status, 2);
  EXPECT_NE(fixed.output.find("64 ranks"), std::string::npos) << fixed.output;
}

TEST(ByosCli, CompareReadsOurOwnJsonFiles) {
  // A cclab-sim -J file (the shape of bench/*_perf -J) compared with the topology it was predicted on:
  // every row's error is 0.
  const TempDir dir("cclab-byos");
  const std::string pred = (dir.path / "pred.json").string();
  ASSERT_EQ(run("allreduce --topo dgx-h100 --algo ring --model analytic -b 1K -e 1M -f 32 -J " + pred).status, 0);
  const CliRun r = run("compare " + pred + " --topo dgx-h100 --algo ring -J " + (dir.path / "cmp.json").string());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(slurp(dir.path / "cmp.json"));
  ASSERT_EQ(j["rows"].size(), 3u);  // 1K, 32K, 1M, out-of-place
  for (const auto& row : j["rows"]) EXPECT_NEAR(row["rel_error"].get<double>(), 0.0, 1e-9) << row.dump();
}

TEST(ByosCli, CalibrateReadsALogAndCrossValidates) {
  const TempDir dir("cclab-byos");
  const std::string log = (dir.path / "host.txt").string();
  std::ofstream(log) << "./build/all_reduce_perf -b 64K -e 4M -f 4 -g 2\n"
                        "# nThread 1 nGpus 2 minBytes 65536 maxBytes 4194304 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
                        "#  Rank  0 Group  0 Pid 1 on h device  0 [0x00] cpu\n#  Rank  1 Group  0 Pid 1 on h device  1 [0x00] cpu\n"
                        "       65536         16384     float     sum      -1    10.00    6.55    6.55      0    10.00    6.55    6.55      0\n"
                        "      262144         65536     float     sum      -1    25.00   10.49   10.49      0    25.00   10.49   10.49      0\n"
                        "     1048576        262144     float     sum      -1    80.00   13.11   13.11      0    80.00   13.11   13.11      0\n"
                        "     4194304       1048576     float     sum      -1   300.00   13.98   13.98      0   300.00   13.98   13.98      0\n";
  const CliRun r = run("calibrate --measured " + log + " --topo host --params classes.thread.latency_us,classes.thread.bandwidth_gbps");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("leave-one-size-out cross-validation"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fitted points: 4 points"), std::string::npos) << r.output;
}

// Issue 32 rows 1-3 and 17: every input the simulator reads goes through one opener. Each case below
// crashed (SIGSEGV: a --from-nccl part not ending in .xml), ran out of memory (/dev/zero behind a .xml
// symlink), blocked forever (a FIFO with no writer), or was read as something else (x.XML as JSON);
// now each is one line, exit 2, within the `timeout` that turns a hang into a failure.
TEST(ByosCli, EveryInputIsARegularFileOrOneLineExitTwo) {
  const TempDir dir("cclab-byos");
  const std::string d = dir.path.string() + "/";
  ASSERT_EQ(::mkfifo((d + "f.xml").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((d + "f.txt").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((d + "f.json").c_str(), 0600), 0);
  std::filesystem::create_symlink("/dev/zero", d + "z.xml");
  std::filesystem::create_symlink("/dev/zero", d + "z.txt");
  std::filesystem::copy_file(kDump, d + "upper.XML");
  std::filesystem::create_directory(d + "dir.json");
  struct Case {
    std::string args, expect;
  };
  const Case cases[] = {
      {"topo --from-nccl nope", "names no .xml file"},
      {"topo --from-nccl " + d + "x.txt", "names no .xml file"},
      {"topo --from-nccl " + kDump + ",," + kDump, "an empty name in the list"},
      {"topo --from-nccl " + kDump + ",", "an empty name in the list"},
      {"topo --from-nccl " + kDump + "," + d + "x.txt", "is not a .xml file"},
      {"topo --from-nccl " + d + "z.xml", "is a character device, not a regular file"},
      {"topo --from-nccl " + d + "f.xml", "is a FIFO, not a regular file"},
      {"allreduce -b 1M -e 1M --topo " + d + "f.xml", "is a FIFO, not a regular file"},
      {"compare " + d + "f.txt --topo cluster", "is a FIFO, not a regular file"},
      {"compare " + d + "z.txt --topo cluster", "is a character device"},
      {"calibrate --measured " + d + "f.txt --topo host", "is a FIFO, not a regular file"},
      {"plan -g 4 --algo file:" + d + "f.json", "is a FIFO, not a regular file"},
      {"plan -g 4 --algo file:" + d + "dir.json", "file:" + d + "dir.json: is a directory"},
      {"allreduce -b 1M -e 1M --topo " + d + "dir.json", "is a directory"},
  };
  for (const auto& c : cases) {
    const CliRun r = cclab::testing::runShell("timeout 20 " + std::string(CCLAB_SIM_BIN) + " " + c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.output;
    EXPECT_EQ(lines(r.output), 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.args << "\n" << r.output;
  }
  // An upper-case extension is a dump, read as one (it was parsed as JSON and refused).
  const CliRun upper = run("allreduce -b 1M -e 1M --model analytic --topo " + d + "upper.XML");
  EXPECT_EQ(upper.status, 0) << upper.output;
  EXPECT_NE(upper.output.find("nccl:upper"), std::string::npos) << upper.output;
}

// Row 4: 2^20 copies of a dump were built (11 s, 3.1 GB) before the rank limit refused them.
TEST(ByosCli, ADumpOfTooManyNodesIsRefusedBeforeItIsBuilt) {
  const CliRun r = run("allreduce --topo " + kDump + " --nodes 1048576 --model analytic -b 1M -e 1M");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("8388608 ranks, more than the 1048576 a topology can have"), std::string::npos) << r.output;
}

// Rows 5, 15, 16 through compare: a '#  Rank' past the bound is refused at its line (was: a 2^20-rank
// run, minutes and gigabytes); a NUL in the file is refused (was: '68\0 52' read as 68); a bad time
// column is counted on stdout and in -J (was: dropped with no word).
TEST(ByosCli, CompareBoundsRanksRefusesNulsAndCountsDroppedColumns) {
  const TempDir dir("cclab-byos");
  const std::string text = slurp(kLog);
  const auto write = [&](const std::string& name, const std::string& body) {
    std::ofstream(dir.path / name, std::ios::binary) << body;
    return (dir.path / name).string();
  };
  std::string ranks = text;
  ranks.replace(ranks.find("#  Rank 15 Group"), 16, "#  Rank 1048575 Group");
  const CliRun many = run("compare " + write("ranks.txt", ranks) + " --topo cluster");
  EXPECT_EQ(many.status, 2) << many.output;
  EXPECT_NE(many.output.find("'#  Rank 1048575': more than the 32768 ranks"), std::string::npos) << many.output;

  const std::string row = "     1048576        262144     float     sum      -1    71.93";
  ASSERT_NE(text.find(row), std::string::npos);
  std::string nul = text;
  nul.insert(nul.find(row) + row.size() - 3, 1, '\0');
  const CliRun n = run("compare " + write("nul.txt", nul) + " --topo cluster");
  EXPECT_EQ(n.status, 2) << n.output;
  EXPECT_NE(n.output.find("a NUL byte at line"), std::string::npos) << n.output;

  std::string bad = text;
  bad.replace(bad.find(row), row.size(), "     1048576        262144     float     sum      -1    -5.00");
  const std::string json = (dir.path / "bad.json").string();
  const CliRun b = run("compare " + write("bad.txt", bad) + " --topo cluster -J " + json);
  EXPECT_EQ(b.status, 0) << b.output;
  EXPECT_NE(b.output.find("the out-of-place time '-5.00' (size 1048576)"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find("# 1 time column(s) did not read and were dropped"), std::string::npos) << b.output;
  EXPECT_EQ(nlohmann::json::parse(slurp(json))["dropped_cells"], 1);
}

}  // namespace
