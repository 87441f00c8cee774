// Bad flags and sizes: exit status 2, exactly one line on stderr, nothing on stdout.
#include <gtest/gtest.h>

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
      {"-t", "4"},                      {"-J", "/nonexistent-dir/x.json"},
      {"--backend", "tpu"},             {"-i", "0", "-b", "8", "-e", "64"},
      {"-g", "-3"},                     {"-w", "-1"},
      {"--algo", "chain"}};  // chain exists for broadcast and reduce only
  for (const auto& args : bad) expectUsageError("all_reduce_perf", args);
}

TEST(PerfUsage, AlgorithmsAndRootsThatDoNotApply) {
  expectUsageError("reduce_scatter_perf", {"--algo", "tree"});
  expectUsageError("all_gather_perf", {"--algo", "rhd"});
  expectUsageError("broadcast_perf", {"-g", "2", "-r", "5"});
  expectUsageError("reduce_perf", {"--algo", "rhd"});
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
                           "--straggler", "-J/--json"})
    EXPECT_NE(run.out.find(flag), std::string::npos) << flag;
}

}  // namespace
}  // namespace cclab::bench::testing
