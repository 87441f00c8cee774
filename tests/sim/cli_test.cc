// The cclab-sim executable: usage errors exit 2 with one line naming the problem.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>

namespace {

struct CliRun {
  int status = -1;
  std::string output;
};

CliRun run(const std::string& args) {
  const std::string cmd = std::string(CCLAB_SIM_BIN) + " " + args + " 2>&1";
  CliRun r;
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return r;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, f)) r.output += buf;
  const int st = pclose(f);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace

TEST(Cli, AllReduceTable) {
  const CliRun r = run("allreduce --topo dgx-h100 --algo ring -b 8 -e 1M -f 4");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("PREDICTED"), std::string::npos);
  EXPECT_NE(r.output.find("524288"), std::string::npos);
}

TEST(Cli, BadTopologyFileExits2NamingTheField) {
  const auto path = std::filesystem::temp_directory_path() / "cclab_sim_cli_bad.json";
  std::ofstream(path) << R"({"kind":"switch","ranks":4,"classes":{"link":{"latency_us":-1,"bandwidth_gbps":5}}})";
  const CliRun r = run("allreduce --topo " + path.string() + " -b 8 -e 8");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("classes.link.latency_us"), std::string::npos) << r.output;
  std::filesystem::remove(path);
}

TEST(Cli, BadUsageExits2) {
  EXPECT_EQ(run("allreduce --algo spiral").status, 2);
  EXPECT_EQ(run("allreduce --no-such-flag").status, 2);
  EXPECT_EQ(run("reducescatter --algo tree").status, 2);
  EXPECT_EQ(run("allreduce -b 1M -e 1K").status, 2);
  EXPECT_EQ(run("straggler --rank 99").status, 2);
  EXPECT_EQ(run("calibrate --measured /no/such/file.json").status, 2);
  EXPECT_EQ(run("").status, 2);
}

TEST(Cli, ScaleAndStraggler) {
  const CliRun s = run("scale --topo cluster --nodes 1..4 --gpus 8 --size 64M");
  ASSERT_EQ(s.status, 0) << s.output;
  EXPECT_NE(s.output.find("hier-ring"), std::string::npos);
  const CliRun g = run("straggler --topo dgx-h100 --rank 2 --slowdown 2 --sizes 1M --algos ring,tree");
  ASSERT_EQ(g.status, 0) << g.output;
  EXPECT_NE(g.output.find("ring"), std::string::npos);
}
