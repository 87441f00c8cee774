// The *_perf tools run as processes on the host backend with small sizes: full tables parsed back,
// #wrong 0, busbw = algbw x the PERFORMANCE.md factor, the footer, and -J JSON that matches the table.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "table_parse.h"
#include "tool_run.h"

namespace cclab::bench::testing {
namespace {

// Printed with two decimals: a recomputed bandwidth may differ by rounding of both numbers: busbw's own
// half unit plus algbw's half unit times the bus factor (up to 2), and a hair for the binary round trip.
constexpr double kPrintedBwTolerance = 0.005 * (1.0 + 2.0) + 1e-9;

double factorOf(const std::string& tool, int n) {
  if (tool == "all_reduce_perf") return 2.0 * (n - 1) / n;
  if (tool == "reduce_scatter_perf" || tool == "all_gather_perf") return static_cast<double>(n - 1) / n;
  return 1.0;
}

std::vector<std::string> smallRun(std::vector<std::string> extra) {
  std::vector<std::string> args{"-b", "8", "-e", "256K", "-f", "8", "-n", "3", "-w", "1", "--backend", "host"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

void expectWellFormed(const ParsedTable& t, const std::string& tool, int nranks, std::size_t rows) {
  ASSERT_EQ(t.rows.size(), rows);
  ASSERT_TRUE(t.outOfBounds.has_value());
  EXPECT_EQ(*t.outOfBounds, 0);
  ASSERT_TRUE(t.avgBusBw.has_value());
  double busSum = 0;
  for (const ParsedRow& r : t.rows) {
    for (const ParsedMeasurement* m : {&r.oop, &r.ip}) {
      ASSERT_TRUE(m->wrong.has_value());
      EXPECT_EQ(*m->wrong, 0) << tool << " size " << r.size;
      EXPECT_NEAR(m->busBw, m->algBw * factorOf(tool, nranks), kPrintedBwTolerance) << tool << " size " << r.size;
      EXPECT_GT(m->timeUs, 0.0);
      busSum += m->busBw;
    }
  }
  EXPECT_NEAR(*t.avgBusBw, busSum / (2.0 * static_cast<double>(rows)), kPrintedBwTolerance);
}

TEST(PerfTools, AllReduceEveryAlgorithmPrintsAFullTable) {
  for (const std::string algo : {"ring", "tree", "dbtree", "rhd", "auto"}) {
    const ToolRun run = runTool("all_reduce_perf", smallRun({"-g", "3", "--algo", algo}));
    ASSERT_EQ(run.status, 0) << algo << "\n" << run.err;
    EXPECT_EQ(run.err, "");
    const ParsedTable t = parseTable(run.out);
    expectWellFormed(t, "all_reduce_perf", 3, 6);  // 8 64 512 4K 32K 256K
    const std::vector<long long> sizes{8, 64, 512, 4096, 32768, 262144};
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_EQ(t.rows[i].size, sizes[i]);
      EXPECT_EQ(t.rows[i].count, sizes[i] / 4);
      EXPECT_EQ(t.rows[i].type, "float");
      EXPECT_EQ(t.rows[i].redop, "sum");
      EXPECT_EQ(t.rows[i].root, -1);
    }
    bool sawColumns = false;
    for (const auto& h : t.headerLines) sawColumns |= h.rfind("#       size         count      type   redop", 0) == 0;
    EXPECT_TRUE(sawColumns);
  }
}

TEST(PerfTools, ChannelsAndNodesRunAndAreInTheHeader) {
  struct Run {
    std::vector<std::string> flags;
    std::vector<std::string> env;
    std::string header;
  };
  const std::vector<Run> runs{
      {{"-g", "8", "--algo", "hier", "--ranks-per-node", "2"}, {}, "channels: backend default  ranksPerNode: 2"},
      {{"-g", "4", "--algo", "hier"}, {"CCLAB_RANKS_PER_NODE=2"}, "ranksPerNode: 2"},
      {{"-g", "4", "--algo", "hier", "--ranks-per-node", "0"}, {"CCLAB_RANKS_PER_NODE=3"}, "ranksPerNode: 0"},
      {{"-g", "3", "--algo", "oneshot", "--channels", "2"}, {}, "channels: 2  ranksPerNode: 0"},
      {{"-g", "5", "--algo", "twoshot", "--channels", "4"}, {}, "channels: 4"},
      {{"-g", "4", "--algo", "ring", "--channels", "3", "--ranks-per-node", "2"}, {}, "channels: 3  ranksPerNode: 2"}};
  for (const Run& r : runs) {
    const ToolRun run = runTool("all_reduce_perf", smallRun(r.flags), r.env);
    ASSERT_EQ(run.status, 0) << r.header << "\n" << run.err;
    const ParsedTable t = parseTable(run.out);
    expectWellFormed(t, "all_reduce_perf", std::stoi(r.flags[1]), 6);
    bool shown = false;
    for (const auto& h : t.headerLines) shown |= h.find(r.header) != std::string::npos;
    EXPECT_TRUE(shown) << r.header << "\n" << run.out;
  }
  for (const char* tool : {"reduce_scatter_perf", "all_gather_perf", "broadcast_perf", "reduce_perf"}) {
    const ToolRun run = runTool(tool, smallRun({"-g", "4", "--channels", "2", "--ranks-per-node", "2"}));
    EXPECT_EQ(run.status, 0) << tool << "\n" << run.err;
  }
}

TEST(PerfTools, OtherCollectivesFollowNcclTestsConventions) {
  constexpr int n = 3;
  for (const std::string tool : {"reduce_scatter_perf", "all_gather_perf", "broadcast_perf", "reduce_perf"}) {
    const ToolRun run = runTool(tool, smallRun({"-g", std::to_string(n), "-r", "2"}));
    ASSERT_EQ(run.status, 0) << tool << "\n" << run.err;
    const ParsedTable t = parseTable(run.out);
    expectWellFormed(t, tool, n, 6);
    const bool perRank = tool == "reduce_scatter_perf" || tool == "all_gather_perf";
    const bool rooted = tool == "broadcast_perf" || tool == "reduce_perf";
    for (const ParsedRow& r : t.rows) {
      EXPECT_EQ(r.size, r.count * 4 * (perRank ? n : 1)) << tool;  // rounded down to whole elements x ranks
      EXPECT_EQ(r.root, rooted ? 2 : -1) << tool;
      EXPECT_EQ(r.redop, (tool == "all_gather_perf" || tool == "broadcast_perf") ? "none" : "sum") << tool;
    }
  }
}

TEST(PerfTools, EveryTypeAndOpChecksExactly) {
  const ToolRun run = runTool("all_reduce_perf", {"-b", "1K", "-e", "1K", "-g", "3", "-d", "all", "-o", "all", "-n", "1",
                                                  "-w", "0", "--algo", "ring", "--backend", "host"});
  ASSERT_EQ(run.status, 0) << run.err;
  const ParsedTable t = parseTable(run.out);
  ASSERT_EQ(t.rows.size(), 7U * 5U);
  for (const ParsedRow& r : t.rows) {
    EXPECT_EQ(r.oop.wrong.value_or(-1), 0) << r.type << " " << r.redop;
    EXPECT_EQ(r.ip.wrong.value_or(-1), 0) << r.type << " " << r.redop;
  }
}

// -t N (nccl-tests' -t N -g 1): N ranks, each driven by its own thread with per-rank calls; the table
// is checked exactly on odd sizes, every type and op, rooted collectives with a non-zero root, and a
// straggler delays one thread's rank.
TEST(PerfTools, ThreadPerRankRunsAndChecksExactly) {
  const ToolRun run = runTool("all_reduce_perf", {"-t", "3", "-b", "12", "-e", "64K", "-f", "17", "-d", "all", "-o", "all",
                                                  "-n", "2", "-w", "1", "--backend", "host"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("nThread 3 nGpus 1"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("each rank's thread times its own calls"), std::string::npos) << run.out;
  const ParsedTable t = parseTable(run.out);
  ASSERT_EQ(t.rows.size(), 7U * 5U * 4U);  // 12, 204, 3468, 58956 bytes (x17) per type and op
  for (const ParsedRow& r : t.rows) {
    EXPECT_EQ(r.oop.wrong.value_or(-1), 0) << r.type << " " << r.redop << " " << r.size;
    EXPECT_EQ(r.ip.wrong.value_or(-1), 0) << r.type << " " << r.redop << " " << r.size;
  }
  for (const char* tool : {"broadcast_perf", "reduce_perf"}) {
    const ToolRun rooted = runTool(tool, smallRun({"-t", "4", "-r", "3", "--straggler", "2:100"}));
    ASSERT_EQ(rooted.status, 0) << tool << ": " << rooted.err;
    expectWellFormed(parseTable(rooted.out), tool, 4, 6);
  }
}

TEST(PerfTools, NoCheckPrintsNotApplicable) {
  const ToolRun run = runTool("all_reduce_perf", smallRun({"-g", "2", "-c", "0"}));
  ASSERT_EQ(run.status, 0) << run.err;
  for (const ParsedRow& r : parseTable(run.out).rows) EXPECT_FALSE(r.oop.wrong.has_value());
}

TEST(PerfTools, StragglerAndSliceAndAggregationRun) {
  const ToolRun run = runTool("all_reduce_perf", smallRun({"-g", "2", "--straggler", "1:50", "--slice", "1K", "-m", "2",
                                                           "-a", "3", "--timeout", "20000"}));
  ASSERT_EQ(run.status, 0) << run.err;
  expectWellFormed(parseTable(run.out), "all_reduce_perf", 2, 6);
  EXPECT_NE(run.out.find("straggler: 1:delay=50us"), std::string::npos);
}

// broadcast and reduce have no dbtree plan: they run the tree, and the header and JSON say so.
TEST(PerfTools, TheHeaderNamesTheAlgorithmThatRuns) {
  const std::string path = tempPath("bcast_dbtree.json");
  const ToolRun run = runTool("broadcast_perf", smallRun({"-g", "3", "--algo", "dbtree", "-J", path}));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("# Algorithm: tree (requested dbtree)"), std::string::npos) << run.out;
  std::ifstream in(path);
  EXPECT_EQ(nlohmann::json::parse(in).at("algo"), "tree");
  const ToolRun ring = runTool("all_reduce_perf", smallRun({"-g", "2", "--algo", "ring"}));
  ASSERT_EQ(ring.status, 0) << ring.err;
  EXPECT_NE(ring.out.find("# Algorithm: ring  slice"), std::string::npos) << ring.out;
}

TEST(PerfTools, JsonMatchesTheTable) {
  const std::string path = tempPath("allreduce.json");
  const ToolRun run = runTool("all_reduce_perf", smallRun({"-g", "2", "--algo", "ring", "-J", path}));
  ASSERT_EQ(run.status, 0) << run.err;
  const ParsedTable t = parseTable(run.out);
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("collective"), "allreduce");
  EXPECT_EQ(j.at("backend"), "host");
  EXPECT_EQ(j.at("algo"), "ring");
  EXPECT_EQ(j.at("nranks"), 2);
  EXPECT_EQ(j.at("type"), "float");
  EXPECT_EQ(j.at("op"), "sum");
  EXPECT_TRUE(j.at("machine").at("cpu").is_string());
  EXPECT_TRUE(j.at("date").is_string());
  EXPECT_NE(j.at("command").get<std::string>().find("all_reduce_perf"), std::string::npos);
  const auto& results = j.at("results");
  ASSERT_EQ(results.size(), t.rows.size());
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = results[i];
    EXPECT_EQ(r.at("size"), t.rows[i].size);
    EXPECT_EQ(r.at("count"), t.rows[i].count);
    EXPECT_EQ(r.at("root"), -1);
    EXPECT_EQ(r.at("redop"), "sum");
    for (const char* place : {"oop", "ip"}) {
      const auto& m = r.at(place);
      const ParsedMeasurement& p = std::string(place) == "oop" ? t.rows[i].oop : t.rows[i].ip;
      EXPECT_EQ(m.at("wrong"), 0);
      EXPECT_NEAR(m.at("busbw").get<double>(), p.busBw, 0.006);
      EXPECT_NEAR(m.at("algbw").get<double>(), p.algBw, 0.006);
      EXPECT_GT(m.at("time_us").get<double>(), 0.0);
    }
  }
  EXPECT_NEAR(j.at("avg_busbw").get<double>(), *t.avgBusBw, 1e-3 * std::max(1.0, *t.avgBusBw));
}

TEST(PerfTools, ARuntimeErrorIsOneLineAndStatus1) {
  // Rank 1 arrives 400 ms late; the others give up after 50 ms: TimeoutError.
  const std::string json = tempPath("timeout.json");
  { std::ofstream(json) << "previous\n"; }
  const ToolRun run = runTool("all_reduce_perf", {"-b", "8", "-e", "8", "-g", "2", "-n", "1", "-w", "0", "--algo", "ring",
                                                  "--backend", "host", "--straggler", "1:400000", "--timeout", "50",
                                                  "-J", json});
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(linesOf(run.err).size(), 1U) << run.err;
  EXPECT_NE(run.err.find("error"), std::string::npos) << run.err;
  // -J is written whole at the end or not at all: the failed run leaves the previous file as it was.
  std::ifstream in(json);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "previous\n");
}

}  // namespace
}  // namespace cclab::bench::testing
