// Bad flags and sizes: exit status 2, exactly one line on stderr, nothing on stdout.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>

#include "tool_run.h"

namespace cclab::bench::testing {
namespace {

void expectUsageError(const std::string& tool, const std::vector<std::string>& args) {
  std::string shown;
  for (const auto& a : args) shown += a + " ";
  const ToolRun run = runTool(tool, args);
  EXPECT_EQ(run.status, 2) << tool << " " << shown << "\nstderr: " << run.err;
  EXPECT_EQ(linesOf(run.err).size(), 1U) << tool << " " << shown << "\nstderr: " << run.err;
  EXPECT_EQ(run.out, "") << tool << " " << shown;
}

TEST(PerfUsage, BadFlagsAndSizesExitWithStatus2AndOneLine) {
  const std::vector<std::vector<std::string>> bad{
      {"-b", "1G", "-e", "8"},          {"-g", "0"},
      {"--algo", "foo"},                {"-b", "x"},
      {"--straggler", "9:10", "-g", "2"}, {"-b", "-8"},
      {"-f", "0"},                      {"--frobnicate"},
      {"-n", "abc"},                    {"-n"},
      {"-d", "complex"},                {"-o", "xor"},
      {"-a", "7"},                      {"--slice", "-1"},
      {"--straggler", "1"},             {"--timeout", "0"},
      {"-b", "0", "-e", "8", "-f", "2"}, {"stray"},
      {"-t", "4", "-g", "2"},           {"-J", "/nonexistent-dir/x.json"},
      {"-J", ""},  // an empty path was "not given": no file, exit 0
      {"-t", "0"},                      {"-t", "2", "--backend", "cuda"},
      {"--backend", "tpu"},             {"-i", "0", "-b", "8", "-e", "64"},
      {"-g", "-3"},                     {"-w", "-1"},
      {"--algo", "chain"},  // chain exists for broadcast and reduce only
      {"-f", "nan"},                    {"-b", "nan"},
      {"-e", "inf"},                    {"-f", "1.5"},
      {"-b", "1.3"},                    {"-e", "9E"},
      {"-e", "99999999999999999999"},  {"-e", "4194305T"},
      {"--minbytes"},                   {"--minbytes=x"},
      {"-bx"},                          {"--stepfactor=0"},
      {"-b", "0", "-e", "1G", "-i", "1"},  // a billion sizes: refused at once, nothing allocated
      {"-b", "8", "-e", "1G", "--slice", "1", "-g", "2"},  // 2^28 slices per call: refused before the run
      {"-b", "1", "-e", "64", "-i", "1", "-n", "1", "-w", "0", "-t"}};
  for (const auto& args : bad) expectUsageError("all_reduce_perf", args);
}

// The first data row's size, from a run that must succeed.
long long firstSize(const std::vector<std::string>& flags) {
  std::vector<std::string> args{"-n", "1", "-w", "0", "--backend", "host"};
  args.insert(args.end(), flags.begin(), flags.end());
  const ToolRun run = runTool("all_reduce_perf", args);
  EXPECT_EQ(run.status, 0) << run.err;
  for (const std::string& line : linesOf(run.out))
    if (!line.empty() && line[0] != '#') return std::stoll(line);
  ADD_FAILURE() << "no row in\n" << run.out;
  return -1;
}

TEST(PerfUsage, EveryNcclTestsFlagSpellingWorks) {
  EXPECT_EQ(firstSize({"-b8", "-e8"}), 8);
  EXPECT_EQ(firstSize({"-b", "16", "-e", "16"}), 16);
  EXPECT_EQ(firstSize({"--minbytes", "24", "--maxbytes", "24"}), 24);
  EXPECT_EQ(firstSize({"--minbytes=32", "--maxbytes=32"}), 32);
  EXPECT_EQ(firstSize({"-b", "1K", "-e", "1KiB"}), 1024);
  EXPECT_EQ(firstSize({"-b", "0.5K", "-e", "0.5KB"}), 512);
  EXPECT_EQ(firstSize({"-b", "64", "-b", "40", "-e", "40"}), 40);  // the last one wins, as with getopt
}

TEST(PerfUsage, StepSpellingsGiveTheSameSweep) {
  for (const std::vector<std::string>& flags : {std::vector<std::string>{"-b8", "-e64", "-f2"},
                                               {"--minbytes=8", "--maxbytes=64", "--stepfactor=2"},
                                               {"-b", "8", "-e", "64", "--stepbytes", "0", "-f", "2"}}) {
    std::vector<std::string> args{"-n", "1", "-w", "0", "--backend", "host"};
    args.insert(args.end(), flags.begin(), flags.end());
    const ToolRun run = runTool("all_reduce_perf", args);
    ASSERT_EQ(run.status, 0) << run.err;
    std::vector<long long> sizes;
    for (const std::string& line : linesOf(run.out))
      if (!line.empty() && line[0] != '#') sizes.push_back(std::stoll(line));
    EXPECT_EQ(sizes, (std::vector<long long>{8, 16, 32, 64})) << run.out;
  }
}

TEST(PerfUsage, RunsThatCannotFitInMemoryAreRefusedAtOnce) {
  const std::string json = tempPath("kept.json");
  { std::ofstream(json) << "{\"old\": 1}\n"; }
  const auto start = std::chrono::steady_clock::now();
  const ToolRun run = runTool("all_reduce_perf", {"-b", "1T", "-e", "1T", "-g", "2", "--backend", "host", "-J", json});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(linesOf(run.err).size(), 1U) << run.err;
  EXPECT_EQ(run.out, "");
  // Both numbers: what the run needs (2 ranks x (send + recv) + 3 staging buffers of 1 TiB) and what is there.
  EXPECT_NE(run.err.find("needs 7696581394432 bytes"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("MemAvailable"), std::string::npos) << run.err;
  std::ifstream in(json);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "{\"old\": 1}\n") << "a refused run must leave -J's old file as it was";
}

TEST(PerfUsage, CopyBandwidthRefusesWhatCannotFit) {
  const ToolRun run = runTool("copy_bandwidth", {"-s", "1T", "-t", "4"});
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(linesOf(run.err).size(), 1U) << run.err;
  EXPECT_NE(run.err.find("needs 8796093022208 bytes"), std::string::npos) << run.err;
  expectUsageError("copy_bandwidth", {"-s", "1.3"});
}

TEST(PerfUsage, EveryToolSharesTheSizeRules) {
  expectUsageError("all_gather_perf", {"--minbytes=nan"});
  expectUsageError("broadcast_perf", {"-f1.5"});
}

TEST(PerfUsage, AlgorithmsAndRootsThatDoNotApply) {
  expectUsageError("reduce_scatter_perf", {"--algo", "tree"});
  expectUsageError("all_gather_perf", {"--algo", "rhd"});
  expectUsageError("broadcast_perf", {"-g", "2", "-r", "5"});
  expectUsageError("reduce_perf", {"--algo", "rhd"});
}

TEST(PerfUsage, BadChannelsAndNodeSizes) {
  for (const char* tool : {"all_reduce_perf", "reduce_scatter_perf", "all_gather_perf", "broadcast_perf", "reduce_perf"}) {
    expectUsageError(tool, {"--channels", "0"});
    expectUsageError(tool, {"--channels", "65"});
    expectUsageError(tool, {"--ranks-per-node", "-1"});
  }
  expectUsageError("all_reduce_perf", {"-g", "6", "--algo", "hier", "--ranks-per-node", "4"});
  // The environment variable stands in for the flag, with the same checks.
  for (const char* value : {"x", "-2", "3"}) {
    const ToolRun run = runTool("all_reduce_perf", {"-g", "4", "--algo", "hier", "-b", "8", "-e", "8"},
                                {std::string("CCLAB_RANKS_PER_NODE=") + value});
    EXPECT_EQ(run.status, 2) << value << ": " << run.err;
    EXPECT_EQ(linesOf(run.err).size(), 1U) << run.err;
  }
}

TEST(PerfUsage, AnUnavailableBackendIsOneLine) {
  // This test's build has no NCCL backend unless CUDA and NCCL were found; only check when it fails.
  const ToolRun run = runTool("all_reduce_perf", {"--backend", "nccl", "-b", "8", "-e", "8", "-n", "1", "-w", "0"});
  if (run.status == 0) GTEST_SKIP() << "nccl backend available here";
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(linesOf(run.err).size(), 1U) << run.err;
  EXPECT_NE(run.err.find("nccl"), std::string::npos) << run.err;
}

TEST(PerfUsage, HelpListsTheFlags) {
  const ToolRun run = runTool("all_reduce_perf", {"-h"});
  EXPECT_EQ(run.status, 0);
  for (const char* flag : {"-b/--minbytes", "-e/--maxbytes", "-f/--stepfactor", "-g/--ngpus", "--backend", "--algo",
                           "--straggler", "-J/--json", "--channels", "--ranks-per-node"})
    EXPECT_NE(run.out.find(flag), std::string::npos) << flag;
}

}  // namespace
}  // namespace cclab::bench::testing
