// Algorithm files in the simulator: a built-in plan written to a file and read back replays in exactly
// the time of the built-in one; the public MSCCL and MSCCL++ algorithms of tests/plan/algorithms replay
// at their rank counts; `--algo file:PATH` is a replay-only simulator algorithm.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "collectives/plan/algorithm_file.h"
#include "sim/algorithms.h"
#include "sim/presets.h"
#include "sim/replay.h"
#include "sim/topology.h"

namespace cclab::sim {
#include "tests/support/shell_run.h"
#include "tests/plan/algorithms/public_algorithms.h"

namespace {

using plan::Collective;

TEST(SimAlgorithmFiles, AnExportedPlanReplaysInTheBuiltInPlansTime) {
  const Topology t(*findPreset("dgx-h100"));
  for (auto a : {plan::Algorithm::Ring, plan::Algorithm::Tree, plan::Algorithm::HalvingDoubling, plan::Algorithm::OneShot})
    for (plan::FileFormat f : {plan::FileFormat::MscclXml, plan::FileFormat::MscclppJson}) {
      const std::int64_t count = 8 * 3 * 4096;  // 384 KiB of floats
      const plan::Plan built = plan::makePlan(Collective::AllReduce, a, 8, count, 0, {2});
      const auto path = std::filesystem::temp_directory_path() /
                        ("cclab_simfile_" + std::to_string(::getpid()) + "_" + std::string(plan::name(a)) + "_" + std::string(plan::name(f)));
      std::ofstream(path) << plan::exportAlgorithm(plan::unitOf(built, "x"), f);
      const SimAlgorithm s = parseSimAlgorithm("file:" + path.string());
      EXPECT_TRUE(infoOf(s).replayOnly);
      const plan::Plan fromFile = plan::makePlan(Collective::AllReduce, infoOf(s).planAlgorithm, 8, count);
      ReplayOptions o;
      o.sliceElems = 4096;
      const ReplayResult want = replay(built, t, o), got = replay(fromFile, t, o);
      EXPECT_GT(want.time, 0);
      EXPECT_EQ(got.time, want.time) << plan::name(a) << " " << plan::name(f);
      EXPECT_EQ(got.bytes, want.bytes) << plan::name(a) << " " << plan::name(f);
      std::filesystem::remove(path);
    }
}

TEST(SimAlgorithmFiles, PublicExamplesReplay) {
  const Topology t(*findPreset("dgx-h100"));
  for (const auto& e : cclab::testing::kPublicAlgorithms) {
    const SimAlgorithm s = parseSimAlgorithm("file:" + cclab::testing::publicAlgorithmPath(e.file));
    EXPECT_NO_THROW(checkAlgorithm(e.collective, s, false));
    for (std::int64_t count : {std::int64_t{1000003}, std::int64_t{4099}}) {
      const plan::Plan p = plan::makePlan(e.collective, infoOf(s).planAlgorithm, e.nranks, count);
      const ReplayResult r = replay(p, t);
      EXPECT_GT(r.time, 0) << e.file;
      EXPECT_GT(r.steps, 0) << e.file;
    }
  }
}

using CliRun = cclab::testing::CommandRun;

CliRun runSim(const std::string& args) {
  return cclab::testing::runShell(std::string(CCLAB_SIM_BIN) + " " + args);
}

// cclab-sim plan: export in one format, convert to the other through file:, and print the plan: the
// ops are the built-in plan's; bad formats and files are one line, exit 2.
TEST(SimAlgorithmFiles, PlanCommandExportsConvertsAndRefuses) {
  const auto dir = std::filesystem::temp_directory_path() / ("cclab_plan_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string xml = (dir / "tree.xml").string(), json = (dir / "tree.json").string();
  // The file holds the plan's channels and nodes: run it on one part (--channels 1) of the same count.
  const std::string shape = "-c allreduce -g 6 --channels 2 --ranks-per-node 3 --count 60", fileShape = "-c allreduce -g 6 --count 60";
  ASSERT_EQ(runSim("plan --algo tree " + shape + " --export msccl-xml -o " + xml).status, 0);
  ASSERT_EQ(runSim("plan --algo file:" + xml + " " + fileShape + " --export mscclpp-json -o " + json).status, 0);
  const CliRun builtIn = runSim("plan --algo tree " + shape), fromFile = runSim("plan --algo file:" + json + " " + fileShape);
  ASSERT_EQ(builtIn.status, 0);
  ASSERT_EQ(fromFile.status, 0) << fromFile.output;
  auto ops = [](const std::string& dump) { return dump.substr(dump.find('\n')); };  // the header names the algorithm
  EXPECT_EQ(ops(fromFile.output), ops(builtIn.output));
  const CliRun badFormat = runSim("plan --export yaml");
  EXPECT_EQ(badFormat.status, 2);
  EXPECT_NE(badFormat.output.find("msccl-xml, mscclpp-json"), std::string::npos) << badFormat.output;
  const CliRun wrongRanks = runSim("plan --algo file:" + json + " -g 4");
  EXPECT_EQ(wrongRanks.status, 2);
  EXPECT_NE(wrongRanks.output.find("written for 6 ranks"), std::string::npos) << wrongRanks.output;
  std::ofstream(dir / "bad.xml") << "<algo coll=\"allreduce\" ngpus=\"2\" nchunksperloop=\"x\"/>";
  const CliRun bad = runSim("allreduce --algo file:" + (dir / "bad.xml").string() + " -g 2 -b 8 -e 8");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("nchunksperloop must be an integer"), std::string::npos) << bad.output;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cclab::sim
