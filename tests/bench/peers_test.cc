// The peers: Gloo (threads) and OpenMPI (under mpirun) print the same table with #wrong 0, and reject
// bad usage like the harness.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "table_parse.h"
#include "tool_run.h"

namespace cclab::bench::testing {
namespace {

const std::vector<std::string> kSmall{"-b", "8", "-e", "64K", "-f", "8", "-n", "3", "-w", "1"};
// Peers run with glibc's mmap off and trimming off, as in bench/compare_peers.
const std::vector<std::string> kPeerEnv{"MALLOC_MMAP_MAX_=0", "MALLOC_TRIM_THRESHOLD_=17179869184"};

void expectAllRight(const ToolRun& run, int nranks) {
  ASSERT_EQ(run.status, 0) << run.err;
  const ParsedTable t = parseTable(run.out);
  ASSERT_EQ(t.rows.size(), 5U);  // 8 64 512 4K 32K
  EXPECT_EQ(t.outOfBounds.value_or(-1), 0);
  for (const ParsedRow& r : t.rows)
    for (const ParsedMeasurement* m : {&r.oop, &r.ip}) {
      EXPECT_EQ(m->wrong.value_or(-1), 0) << r.size;
      EXPECT_NEAR(m->busBw, m->algBw * 2.0 * (nranks - 1) / nranks, 0.011);
    }
}

TEST(Peers, GlooRingAllReduce) {
  if (!CCLAB_HAVE_GLOO_PEER) GTEST_SKIP() << "built without Gloo";
  std::vector<std::string> args = kSmall;
  const std::string json = tempPath("gloo.json");
  args.insert(args.end(), {"-g", "3", "-J", json});
  expectAllRight(runTool("gloo_allreduce_perf", args, kPeerEnv), 3);
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("backend"), "gloo");
  EXPECT_EQ(j.at("results").size(), 5U);
}

TEST(Peers, GlooRejectsBadUsage) {
  if (!CCLAB_HAVE_GLOO_PEER) GTEST_SKIP() << "built without Gloo";
  for (const std::vector<std::string>& args : {std::vector<std::string>{"-d", "half"}, {"-o", "max"}, {"-g", "0"},
                                              {"--algo", "ring"}, {"-b", "1G", "-e", "8"},
                                              {"--minbytes=nan"}, {"-f1.5"}, {"-b", "1T", "-e", "1T", "-g", "2"}}) {
    const ToolRun run = runTool("gloo_allreduce_perf", args);
    EXPECT_EQ(run.status, 2) << args[0];
    EXPECT_EQ(linesOf(run.err).size(), 1U) << run.err;
  }
}

TEST(Peers, OpenMpiAllReduce) {
  if (!CCLAB_HAVE_MPI_PEER) GTEST_SKIP() << "built without MPI";
  if (!onPath("mpirun")) GTEST_SKIP() << "no mpirun on PATH";
  std::vector<std::string> args{"--allow-run-as-root", "--oversubscribe", "-np", "2", binPath("mpi_allreduce_perf")};
  args.insert(args.end(), kSmall.begin(), kSmall.end());
  std::vector<std::string> env = kPeerEnv;
  env.insert(env.end(), {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"});
  expectAllRight(runProgram("mpirun", args, env), 2);
}

TEST(Peers, OpenMpiRejectsBadUsageBeforeStarting) {
  if (!CCLAB_HAVE_MPI_PEER) GTEST_SKIP() << "built without MPI";
  const ToolRun run = runTool("mpi_allreduce_perf", {"-b", "x"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(linesOf(run.err).size(), 1U) << run.err;
  // 100000 ranks of this job on this machine (as mpirun would say), 3 buffers of 1 GiB each: never fits.
  const ToolRun big = runTool("mpi_allreduce_perf", {"-b", "1G", "-e", "1G"}, {"OMPI_COMM_WORLD_LOCAL_SIZE=100000"});
  EXPECT_EQ(big.status, 2);
  EXPECT_EQ(linesOf(big.err).size(), 1U) << big.err;
  EXPECT_NE(big.err.find("on 100000 ranks needs 322122547200000 bytes"), std::string::npos) << big.err;
}

}  // namespace
}  // namespace cclab::bench::testing
