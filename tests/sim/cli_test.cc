// The cclab-sim executable: usage errors exit 2 with one line naming the problem.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include "tests/support/shell_run.h"

namespace {

using CliRun = cclab::testing::CommandRun;

CliRun run(const std::string& args) {
  return cclab::testing::runShell(std::string(CCLAB_SIM_BIN) + " " + args);
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

TEST(Cli, ZeroRanksOrNodesAreRefusedNotIgnored) {
  for (const char* args : {"allreduce -g 0 -b 8 -e 8", "allreduce --topo cluster --nodes 0 -b 8 -e 8",
                           "allreduce --topo cluster --gpus 0 -b 8 -e 8", "scale --nodes 0", "scale --nodes 0..4"}) {
    const CliRun r = run(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << args << ": " << r.output;
  }
}

TEST(Cli, AlgorithmErrorsListEveryAlgorithmFromTheTable) {
  const CliRun r = run("allreduce --algo spiral");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("ring, tree, flat-tree, dbtree, rhd, rd, chain, oneshot, twoshot, hier-ring, hier-tree"), std::string::npos) << r.output;
  EXPECT_EQ(run("allreduce --algo rd -b 8 -e 64").status, 0);
}

TEST(Cli, BroadcastDbtreeReportsTheTreeItRuns) {
  const CliRun r = run("broadcast --algo dbtree -b 1M -e 1M");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("algo=tree "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("dbtree"), std::string::npos) << r.output;
  const CliRun same = run("broadcast --algo tree -b 1M -e 1M");
  EXPECT_EQ(r.output, same.output);
}

TEST(Cli, StragglerFlagInTheSharedSyntaxMatchesTheOldFlags) {
  const CliRun old = run("straggler --rank 2 --slowdown 3 --delay 5 --sizes 1M --algos ring,rd");
  const CliRun now = run("straggler --straggler 2:delay=5us,compute=3,link=3 --sizes 1M --algos ring,rd");
  ASSERT_EQ(old.status, 0) << old.output;
  ASSERT_EQ(now.status, 0) << now.output;
  EXPECT_EQ(old.output, now.output);
  EXPECT_EQ(run("straggler --straggler 2:speed=3").status, 2);
  EXPECT_EQ(run("straggler --straggler 99:2").status, 2);
}

TEST(Cli, OutputsAreCheckedBeforeTheWorkAndReplayRefusesRunaways) {
  const CliRun dir = run("allreduce -b 8 -e 8 -J " + std::filesystem::temp_directory_path().string());
  EXPECT_EQ(dir.status, 2) << dir.output;
  EXPECT_NE(dir.output.find("-J"), std::string::npos) << dir.output;
  const CliRun big = run("allreduce -g 100000 -b 8 -e 8");
  EXPECT_EQ(big.status, 2) << big.output;
  EXPECT_NE(big.output.find("--model analytic"), std::string::npos) << big.output;
  EXPECT_EQ(run("allreduce -g 100000 -b 8 -e 8 --model analytic").status, 0);
  EXPECT_EQ(run("bench --ranks 100000").status, 2);
}

// --trace is bounded before any replay runs (the trainer's 5,000,000 events, kMaxTraceEvents): one line
// naming the bound and the limit, exit 2, nothing written. It had no bound: 512 ranks at 1 GiB took
// 4.3 GB of memory to write a 230 MB trace.
TEST(Cli, ARunawayTraceIsRefusedBeforeTheReplayWithTheLimit) {
  const auto trace = std::filesystem::temp_directory_path() / ("cclab_sim_runaway_trace_" + std::to_string(::getpid()) + ".json");
  const auto start = std::chrono::steady_clock::now();
  const CliRun r = run("allreduce --topo cluster --nodes 64 -b 1G -e 1G --trace " + trace.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_NE(r.output.find("cclab-sim: error: --trace: the events of the 1G ring replay on 512 ranks (at most 2 per op-slice) is "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(", more than the limit of 5000000 ("), std::string::npos) << r.output;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_FALSE(std::filesystem::exists(trace));
  // The same sweep without --trace is not refused by it: only the traced (largest) size counts.
  const CliRun fits = run("allreduce --topo cluster --nodes 2 -b 8 -e 1M --trace " + trace.string());
  EXPECT_EQ(fits.status, 0) << fits.output;
  std::ifstream in(trace);
  const auto j = nlohmann::json::parse(in);
  EXPECT_GT(j["traceEvents"].size(), 2U);
  EXPECT_EQ(j["otherData"]["truncated"], false);
  std::filesystem::remove(trace);
}

// plan --export refuses, before the plan is made, a file our own importer would refuse (its limits:
// algorithm_file.h): one line naming the value and the limit, exit 2, nothing written. A 1024-rank ring
// took 4.8 GB and wrote a file `--algo file:` refused; an odd --count wrote one of a million chunks.
TEST(Cli, AnExportOurImporterRefusesIsRefusedUpFront) {
  const auto out = std::filesystem::temp_directory_path() / ("cclab_sim_export_" + std::to_string(::getpid()) + ".xml");
  const auto start = std::chrono::steady_clock::now();
  const struct {
    const char* args;
    const char* says;
  } refused[] = {
      {"--algo ring -g 1024 --export msccl-xml", "--export: the plan's ops (one step of the file each, at least) is 4190208, more than the limit of 1048576"},
      {"--algo ring -g 512 --export mscclpp-json", "--export: the file's chunks x ranks^2 (what the importer's check holds) is 134217728"},
      {"--algo ring -g 3 --count 1000003 --export msccl-xml", "--export: the chunks of one buffer (--count over the gcd of the plan's ranges) is 1000003"},
      {"--algo ring -g 2000 --export msccl-xml", "--export: -g is 2000, more than the limit of 1024"},
  };
  for (const auto& c : refused) {
    const CliRun r = run("plan " + std::string(c.args) + " -o " + out.string());
    EXPECT_EQ(r.status, 2) << c.args << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.args;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  // What passes the checks is read back by the importer.
  const CliRun ok = run("plan --algo ring -g 64 --export msccl-xml -o " + out.string());
  ASSERT_EQ(ok.status, 0) << ok.output;
  EXPECT_EQ(run("plan --algo file:" + out.string() + " -g 64").status, 0);
  std::filesystem::remove(out);
}

TEST(Cli, ScaleWritesItsCrossoversToJson) {
  const auto path = std::filesystem::temp_directory_path() / "cclab_sim_cli_scale.json";
  const CliRun r = run("scale --topo cluster --nodes 2 --gpus 4 --size 1M --algos ring -J " + path.string());
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(path);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("tree_vs_ring_bytes"), std::string::npos);
  std::filesystem::remove(path);
}

// A 2-node cluster's ring runs one channel per GPU (the topology's default), so every NIC carries
// data; --channels 1 leaves most of them idle. hier-ring (and its plan name hier) is replayed.
TEST(Cli, ClusterLinksShowEveryNicBusyAndHierReplays) {
  const CliRun all = run("allreduce --topo cluster --nodes 2 --algo ring --links -b 16M -e 16M");
  ASSERT_EQ(all.status, 0) << all.output;
  EXPECT_NE(all.output.find("# plan shape: 8 channel(s), 8 ranks per node"), std::string::npos) << all.output;
  EXPECT_NE(all.output.find("# NIC links: 32 of 32 carry data"), std::string::npos) << all.output;
  const CliRun one = run("allreduce --topo cluster --nodes 2 --algo ring --links -b 16M -e 16M --channels 1");
  ASSERT_EQ(one.status, 0) << one.output;
  EXPECT_NE(one.output.find("# NIC links: 4 of 32 carry data"), std::string::npos) << one.output;
  EXPECT_EQ(run("allreduce --channels 0 -b 8 -e 8").status, 2);
  EXPECT_EQ(run("allreduce --channels 65 -b 8 -e 8").status, 2);
  for (const char* algo : {"hier", "hier-ring"}) {
    const CliRun h = run(std::string("allreduce --topo cluster --nodes 2 --algo ") + algo + " -b 1M -e 1M");
    ASSERT_EQ(h.status, 0) << h.output;
    EXPECT_NE(h.output.find("PREDICTED (replay) allreduce algo=hier-ring"), std::string::npos) << h.output;
  }
  const CliRun tree = run("allreduce --topo cluster --nodes 2 --algo hier-tree -b 1M -e 1M");
  ASSERT_EQ(tree.status, 0) << tree.output;
  EXPECT_NE(tree.output.find("PREDICTED (analytic)"), std::string::npos) << tree.output;
}

// Runaway work is refused at the command line in one line that states the limit, exit 2: a sweep of
// more than 10000 sizes, a slice that cuts the plan into more than 1e9 op-slices, an op-slice limit
// raised past 1e10, more ranks than a replay runs.
TEST(Cli, RunawayGuardsStateTheirLimitInOneLine) {
  struct Case {
    const char* args;
    const char* limit;
  };
  for (const Case& c : {Case{"allreduce -b 0 -e 1G -i 1", "10000"}, Case{"allreduce -g 8 -b 1G -e 1G --slice 4", "1000000000"},
                        Case{"bench --ranks 8 --max-op-slices 20000000000", "10000000000"},
                        Case{"bench --ranks 40000", "32768"}}) {
    const CliRun r = run(c.args);
    EXPECT_EQ(r.status, 2) << c.args << ": " << r.output;
    EXPECT_NE(r.output.find(c.limit), std::string::npos) << c.args << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << c.args << ": " << r.output;
  }
}

// --algo nccl prints, per size, NCCL's pick with its model's time and ours beside it; -J has both.
TEST(Cli, AlgoNcclPrintsNcclsTimeBesideOurs) {
  const auto path = std::filesystem::temp_directory_path() / "cclab_sim_cli_nccl.json";
  const CliRun r = run("allreduce --topo dgx-h200 --algo nccl -b 8 -e 1G -f 1024 -J " + path.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("nccl us"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ours us"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" ring      ll "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" nvls  simple "), std::string::npos) << r.output;
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j.at("rows").size(), 3U);  // 8 B, 8 KiB, 8 MiB
  for (const auto& row : j.at("rows")) {
    EXPECT_GT(row.at("nccl_time_us").get<double>(), 0) << row;
    EXPECT_GT(row.at("ours_time_us").get<double>(), 0) << row;
  }
  std::filesystem::remove(path);
  const CliRun host = run("allreduce --topo host --algo nccl -b 8 -e 8");
  EXPECT_EQ(host.status, 2) << host.output;
}

// --protocol: ll, ll128, simple or auto (the default); every prediction says which protocol the call took.
TEST(Cli, ProtocolIsChosenPerCallAndReported) {
  const CliRun bad = run("allreduce --protocol ll64 -b 8 -e 8");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("--protocol must be ll, ll128, simple or auto"), std::string::npos) << bad.output;
  const CliRun noLL128 = run("allreduce --topo pcie --protocol ll128 -b 8 -e 8");  // PCIe: NCCL runs no LL128
  EXPECT_EQ(noLL128.status, 2) << noLL128.output;
  EXPECT_NE(noLL128.output.find("does not run it"), std::string::npos) << noLL128.output;
  const CliRun host = run("allreduce --topo host --protocol simple -b 8 -e 8");  // ll_protocol false
  EXPECT_EQ(host.status, 2);
  EXPECT_EQ(std::count(host.output.begin(), host.output.end(), '\n'), 1) << host.output;
  // dgx-h100: 1 MiB is an LL call, 32 MiB an LL128 one, 1 GiB a Simple one.
  const auto path = std::filesystem::temp_directory_path() / "cclab_sim_cli_protocol.json";
  const CliRun a = run("allreduce --topo dgx-h100 -b 1M -e 1G -f 32 -J " + path.string());
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("protocol=auto"), std::string::npos) << a.output;
  EXPECT_NE(a.output.find("# protocol per call: ll 1M, ll128 32M, simple 1G"), std::string::npos) << a.output;
  std::ifstream in(path);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"protocol\": \"ll\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"protocol\": \"simple\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"protocol\": \"ll128\""), std::string::npos) << json;
  std::filesystem::remove(path);
  const CliRun forced = run("allreduce --topo dgx-h100 -b 8 -e 128M -f 16777216 --protocol ll");
  ASSERT_EQ(forced.status, 0) << forced.output;
  EXPECT_NE(forced.output.find("# protocol per call: ll 8B..128M"), std::string::npos) << forced.output;
  const CliRun s = run("scale --topo cluster --nodes 2 --gpus 8 --size 256M --algos ring --model replay --protocol simple");
  ASSERT_EQ(s.status, 0) << s.output;
  EXPECT_NE(s.output.find("proto"), std::string::npos) << s.output;
  EXPECT_NE(s.output.find(" simple |"), std::string::npos) << s.output;
}

// Runaways refused up front with the limit in one line: a replayed scale past 512 ranks (minutes of
// replay with no output before), a calibration of a 3000-rank file (minutes of replays).
TEST(Cli, RunawayScaleReplaysAndCalibrationsAreRefusedWithTheLimit) {
  const auto start = std::chrono::steady_clock::now();
  const CliRun s = run("scale --model replay --nodes 1..4096");
  EXPECT_EQ(s.status, 2) << s.output;
  EXPECT_NE(s.output.find("128 nodes of 8 GPUs are 1024 ranks, more than the 512 that scale --model replay replays"), std::string::npos)
      << s.output;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("cclab_sim_cal_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string rows = R"("results":[{"size":1024,"oop":{"time_us":12}},{"size":65536,"oop":{"time_us":40}}])";
  const auto calibrate = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return run("calibrate --measured " + (dir / name).string() + " --topo host -o " + (dir / "out.json").string());
  };
  const CliRun big = calibrate("big.json", R"({"collective":"allreduce","algo":"ring","nranks":3000,)" + rows + "}");
  EXPECT_EQ(big.status, 2) << big.output;
  EXPECT_NE(big.output.find("nranks 3000 is more than calibrate fits (at most 64"), std::string::npos) << big.output;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  // Inputs that were taken silently: a missing collective, a default (auto) bench file, a time <= 0.
  const CliRun none = calibrate("none.json", R"({"algo":"ring","nranks":4,)" + rows + "}");
  EXPECT_EQ(none.status, 2) << none.output;
  EXPECT_NE(none.output.find("field 'collective' is missing"), std::string::npos) << none.output;
  const CliRun autoAlgo = calibrate("auto.json", R"({"collective":"allreduce","algo":"auto","nranks":4,)" + rows + "}");
  EXPECT_EQ(autoAlgo.status, 2) << autoAlgo.output;
  EXPECT_NE(autoAlgo.output.find("field 'algo' is auto: the file does not say which algorithm"), std::string::npos) << autoAlgo.output;
  EXPECT_EQ(autoAlgo.output.find("makePlan"), std::string::npos) << autoAlgo.output;
  for (const char* t : {"0", "-3"}) {
    const CliRun bad = calibrate("t.json", std::string(R"({"collective":"allreduce","algo":"ring","nranks":4,"results":[{"size":1024,"oop":{"time_us":)") +
                                               t + "}}]}");
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("'results[0].oop.time_us' must be a positive time"), std::string::npos) << bad.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out.json"));
  std::filesystem::remove_all(dir);
}

// Inputs that were taken silently: empty output paths, an op no backend has, a key given twice in an
// input file (the parser kept the last one).
TEST(Cli, EmptyPathsUnknownOpsAndDuplicateKeysAreRefused) {
  for (const char* args : {"allreduce -b 8 -e 8 -J ''", "allreduce -b 8 -e 8 --trace ''", "allreduce -b 8 -e 8 -o xor",
                           "topo host -o ''"}) {
    const CliRun r = run(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << args << ": " << r.output;
  }
  const auto path = std::filesystem::temp_directory_path() / ("cclab_sim_dup_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << R"({"collective":"allreduce","algo":"ring","nranks":4,"nranks":64,"results":[{"size":8,"oop":{"time_us":1}}]})";
  const CliRun dup = run("calibrate --measured " + path.string() + " --topo host -o " + path.string() + ".out");
  EXPECT_EQ(dup.status, 2) << dup.output;
  EXPECT_NE(dup.output.find("the key \"nranks\" appears twice"), std::string::npos) << dup.output;
  std::filesystem::remove(path);
}

// A plan too large even unsliced is named as such, not as "the slice size 0 elements cuts this plan".
TEST(Cli, APlanTooLargeUnslicedSaysSo) {
  const CliRun r = run("allreduce -g 32768 -b 1M -e 1M");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("ops over its 32768 ranks even unsliced"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("slice size 0"), std::string::npos) << r.output;
}

// Issue 32 #9, #10: the replays of a whole command are counted before the first (sim/replay_work.h)
// and refused past the limit in one line, before the table's header. On main `scale --model replay` at
// 1 TiB per rank and `compare --model replay` of a 3000-run log ran for hours (killed here by
// `timeout`, status 124 instead of 2).
TEST(Cli, RunawayReplayWorkOfScaleAndCompareIsRefusedBeforeTheFirstReplay) {
  const std::string bin = "timeout 60 " + std::string(CCLAB_SIM_BIN);
  const CliRun s = cclab::testing::runShell(bin + " scale --model replay --nodes 1..4 --size 1T");
  EXPECT_EQ(s.status, 2) << s.output;
  EXPECT_NE(s.output.find("scale's replay work (op-slices of every algorithm at every node count) is "), std::string::npos) << s.output;
  EXPECT_NE(s.output.find("more than the limit of 200000000"), std::string::npos) << s.output;
  EXPECT_NE(s.output.find("use --model analytic"), std::string::npos) << s.output;
  EXPECT_EQ(std::count(s.output.begin(), s.output.end(), '\n'), 1) << s.output;
  // The analytic model replays nothing: the same sweep is a table.
  const CliRun analytic = run("scale --nodes 1..4 --size 1T --algos ring");
  EXPECT_EQ(analytic.status, 0) << analytic.output;

  const std::string dir = std::string(CCLAB_SOURCE_DIR) + "/tests/sim/data/";
  const auto big = std::filesystem::temp_directory_path() / ("cclab_sim_3000runs_" + std::to_string(::getpid()) + ".txt");
  {
    std::ifstream in(dir + "nccl-tests/nccl-tests-309-h100-ib400-runs.txt");  // 3 runs
    const std::string runs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream out(big);
    for (int i = 0; i < 1000; ++i) out << runs;
  }
  const std::string args = " compare " + big.string() + " --collective allreduce --topo " + dir + "nccl/ibm-gx3d-h100.xml";
  const CliRun c = cclab::testing::runShell(bin + args + " --model replay");
  EXPECT_EQ(c.status, 2) << c.output;
  EXPECT_NE(c.output.find("compare's replay work (op-slices of every candidate algorithm for every row of every run) is "),
            std::string::npos)
      << c.output;
  EXPECT_NE(c.output.find("use --model analytic"), std::string::npos) << c.output;
  EXPECT_EQ(c.output.find("# cclab-sim compare:"), std::string::npos) << c.output;
  std::filesystem::remove(big);
}

// Issue 32 #21: a fit with fewer distinct points than parameters is refused in one line naming both
// counts (on main it fitted 2 parameters to 1 point and reported 0% error), and a calibration whose
// cross-validation cannot run says so on stdout and in -J (on main it was left out silently).
TEST(Cli, CalibrateRefusesUnderDeterminedFitsAndSaysWhenCrossValidationIsSkipped) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("cclab_sim_cv_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string params = " --params classes.thread.latency_us,classes.thread.bandwidth_gbps";
  std::ofstream(dir / "one.json") << R"({"collective":"allreduce","algo":"ring","nranks":4,"results":[{"size":65536,"oop":{"time_us":40}}]})";
  const CliRun one = run("calibrate --measured " + (dir / "one.json").string() + " --topo host" + params + " -o " + (dir / "o.json").string());
  EXPECT_EQ(one.status, 2) << one.output;
  EXPECT_NE(one.output.find("2 parameters cannot be fitted to 1 distinct measured point(s)"), std::string::npos) << one.output;
  EXPECT_EQ(std::count(one.output.begin(), one.output.end(), '\n'), 1) << one.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "o.json"));
  std::ofstream(dir / "two.json") << R"({"collective":"allreduce","algo":"ring","nranks":4,"results":[{"size":1024,"oop":{"time_us":12}},)"
                                     R"({"size":65536,"oop":{"time_us":40}}]})";
  const CliRun two = run("calibrate --measured " + (dir / "two.json").string() + " --topo host" + params + " -o " + (dir / "o.json").string() +
                         " -J " + (dir / "fit.json").string());
  ASSERT_EQ(two.status, 0) << two.output;
  EXPECT_NE(two.output.find("# cross-validation skipped: the fitted points have 2 distinct size(s); leaving one out needs at least 3"),
            std::string::npos)
      << two.output;
  std::ifstream in(dir / "fit.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["cv_skipped"], "the fitted points have 2 distinct size(s); leaving one out needs at least 3");
  std::filesystem::remove_all(dir);
}
