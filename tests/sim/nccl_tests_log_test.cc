// nccl-tests text output read as measured runs (sim/nccl_tests_log.h) and compared with the prediction
// (sim/compare.h). The logs under tests/sim/data/nccl-tests/ are public, each with its source here.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "sim/compare.h"
#include "sim/nccl_tests_log.h"
#include "sim/presets.h"
#include "sim/topology.h"

namespace cclab::sim {
namespace {

using plan::Collective;

std::string dataPath(const std::string& name) { return std::string(CCLAB_SOURCE_DIR) + "/tests/sim/data/nccl-tests/" + name; }
std::string slurpFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// NVIDIA/nccl-tests issue 309, "Acceptable performance of nccl-test on 2 or 4 HGX hosts?"
// (https://github.com/NVIDIA/nccl-tests/issues/309): all_reduce_perf_mpi on two Dell XE9680 (8 x H100,
// 8 x ConnectX-7 400 Gb/s each), 16 ranks, 8 B to 16 GiB, as posted: the mpirun command line, MPI's
// xpmem warnings in between, then the table.
const char* k309 = "nccl-tests-309-hgx-h100-2node.txt";
// NVIDIA/nccl-tests issue 256, "NCCL topology on the VM of H200"
// (https://github.com/NVIDIA/nccl-tests/issues/256): the bare-metal run on two 8 x H200 servers, 16
// ranks, 1 GiB to 9 GiB by a factor 3, after a shell prompt.
const char* k256 = "nccl-tests-256-h200-2node.txt";

// The same thread, another cluster (8 x H100 per node, InfiniBand 400 Gb/s): three logs one after the
// other as posted there: 2 nodes (no command line), 8 nodes with NCCL_MIN_CTAS=24 (mpirun line), 2 nodes
// with NCCL_ALGO=Ring (mpirun line broken over two lines). Rank lines are regular and were written out
// from the values shown (host, pid, bus id); line-end spaces may differ from the post.
const char* k309Runs = "nccl-tests-309-h100-ib400-runs.txt";

TEST(NcclTestsLog, ThreeRunsOfDifferentSizeInOneFile) {
  // The first run names no binary: refused unless the caller says which collective.
  EXPECT_THROW(loadNcclTestsLog(dataPath(k309Runs)), MeasuredError);
  const NcclTestsLog log = loadNcclTestsLog(dataPath(k309Runs), Collective::AllReduce);
  ASSERT_EQ(log.runs.size(), 3u);
  EXPECT_EQ(log.skippedRows, 0);
  EXPECT_EQ(log.runs[0].nranks, 16);
  EXPECT_EQ(log.runs[1].nranks, 64);
  EXPECT_EQ(log.runs[2].nranks, 16);
  EXPECT_EQ(log.runs[0].binary, "");
  EXPECT_EQ(log.runs[1].binary, "all_reduce_perf");
  EXPECT_EQ(log.runs[2].binary, "all_reduce_perf");
  for (const auto& run : log.runs) {
    ASSERT_EQ(run.rows.size(), 14u);  // 1 MiB .. 8 GiB
    EXPECT_EQ(run.rows.front().size, 1048576);
    EXPECT_EQ(run.rows.back().size, 8589934592LL);
  }
  EXPECT_DOUBLE_EQ(log.runs[1].rows[3].oopTime, 889.1);  // the 8 MiB outlier of the 8-node run, as measured
  EXPECT_DOUBLE_EQ(log.runs[2].rows.back().ipTime, 41056);
}

TEST(NcclTestsLog, TheHgxH100LogIsOneAllreduceRunOf32Rows) {
  const NcclTestsLog log = loadNcclTestsLog(dataPath(k309));
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_EQ(log.skippedRows, 0);
  const NcclTestsRun& run = log.runs[0];
  EXPECT_EQ(run.binary, "all_reduce_perf");
  EXPECT_EQ(run.collective, Collective::AllReduce);
  EXPECT_EQ(run.nranks, 16);
  EXPECT_FALSE(run.graph);
  ASSERT_EQ(run.rows.size(), 32u);  // 8 B .. 16 GiB
  EXPECT_EQ(run.rows.front().size, 8);
  EXPECT_DOUBLE_EQ(run.rows.front().oopTime, 68.52);
  EXPECT_DOUBLE_EQ(run.rows.front().ipTime, 24.70);
  EXPECT_EQ(run.rows.back().size, 17179869184LL);
  EXPECT_EQ(run.rows.back().count, 4294967296LL);
  EXPECT_DOUBLE_EQ(run.rows.back().oopTime, 68652);
  EXPECT_DOUBLE_EQ(run.rows.back().oopBusbw, 469.21);
  EXPECT_EQ(run.rows.back().type, "float");
  EXPECT_EQ(run.rows.back().redop, "sum");
}

TEST(NcclTestsLog, TheH200LogAfterAShellPromptIsRead) {
  const NcclTestsLog log = loadNcclTestsLog(dataPath(k256));
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_EQ(log.runs[0].nranks, 16);
  ASSERT_EQ(log.runs[0].rows.size(), 3u);
  EXPECT_EQ(log.runs[0].rows[1].size, 3221225472LL);
  EXPECT_DOUBLE_EQ(log.runs[0].rows[1].ipTime, 12802);
}

TEST(NcclTestsLog, SeveralRunsAndGraphRunsAndCollectivesInOneFile) {
  // Two logs one after the other (the second of another binary, run with -G), as a script that runs
  // several *_perf in a row writes them.
  const std::string a = slurpFile(dataPath(k256));
  const std::string b =
      "$ ./build/all_gather_perf -b 1M -e 2M -f 2 -g 4 -G 1\n"
      "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 1\n"
      "#  Rank  0 Group  0 Pid  1 on h device  0 [0x18] NVIDIA H100\n"
      "#  Rank  3 Group  0 Pid  1 on h device  3 [0x5d] NVIDIA H100\n"
      "     1048576         65536     float    none      -1    20.00   52.43   39.32      0    19.00   55.19   41.39      0\n"
      "     2097152        131072     float    none      -1    30.00   69.91   52.43      0    29.00   72.32   54.24      0\n";
  const NcclTestsLog log = parseNcclTestsLog(a + b, "two.txt");
  ASSERT_EQ(log.runs.size(), 2u);
  EXPECT_EQ(log.runs[0].collective, Collective::AllReduce);
  EXPECT_EQ(log.runs[1].collective, Collective::AllGather);
  EXPECT_EQ(log.runs[1].binary, "all_gather_perf");
  EXPECT_TRUE(log.runs[1].graph);
  EXPECT_EQ(log.runs[1].gpus, 4);
  EXPECT_EQ(log.runs[1].nranks, 4);
  ASSERT_EQ(log.runs[1].rows.size(), 2u);
  EXPECT_EQ(log.runs[1].index, 1);
}

TEST(NcclTestsLog, BadRowsAreSkippedAndCountedNeverRead) {
  std::string text = slurpFile(dataPath(k309));
  // A row of another collective (a broadcast row, root 0), a row whose algbw disagrees with its time,
  // and the last line cut in the middle.
  const auto table = text.find("           8             2");
  text.insert(table, "     1048576        262144     float    none       0    71.93   14.58   14.58      0    71.47   14.67   14.67      0\n"
                     "     2097152        524288     float     sum      -1    99.99   27.51   51.58      0    99.99   27.37   51.32      0\n");
  text += " 34359738368    8589934592     float     sum      -1   137";
  const NcclTestsLog log = parseNcclTestsLog(text, "bad.txt");
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_EQ(log.runs[0].rows.size(), 32u);
  EXPECT_EQ(log.skippedRows, 3);
  EXPECT_EQ(log.warnings.size(), 3u);
  for (const auto& r : log.runs[0].rows) EXPECT_NE(r.oopTime, 99.99);
}

TEST(NcclTestsLog, RefusalsAreOneLine) {
  const auto refused = [](const std::string& text, const std::string& expect) {
    try {
      parseNcclTestsLog(text, "x.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const MeasuredError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(expect), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  };
  refused("", "no table row");
  refused("PING 10.0.0.1 56(84) bytes of data.\n64 bytes from 10.0.0.1: icmp_seq=1 ttl=64 time=0.05 ms\n", "no table row");
  // No binary named anywhere: the collective is unknown.
  refused("# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1 graph: 0\n", "--collective");
  // Rows but no rank lines.
  refused("./all_reduce_perf\n# nThread 1 nGpus 1 graph: 0\n 8 2 float sum -1 10.00 0.00 0.00 0 10.00 0.00 0.00 0\n", "rank count");
  // The same run is read when the caller names the collective.
  const NcclTestsLog ok = parseNcclTestsLog("# nThread 1 nGpus 2 graph: 0\n#  Rank  1 Group 0\n 8 2 float sum -1 10.00 0.00 0.00 0 10.00 0.00 0.00 0\n",
                                            "y.txt", Collective::AllReduce);
  EXPECT_EQ(ok.runs.at(0).rows.size(), 1u);
  // A run of a binary with no model (alltoall) is skipped with a warning, not read as another collective.
  const std::string alltoall = "./alltoall_perf -b 8\n# nThread 1 nGpus 2 graph: 0\n#  Rank  1 Group 0\n 8 1 float none -1 10.00 0.00 0.00 0 10.00 0.00 0.00 0\n";
  refused(alltoall, "no table row read (1 skipped)");
}

// Issue 32 row 15: a row with one bad time column (negative, 0, NaN, inf) kept its other column and lost
// this one with no word; now the loss is counted and warned about, line and value named.
TEST(NcclTestsLog, ABadTimeColumnIsDroppedCountedAndNamed) {
  const std::string head = "./all_reduce_perf\n# nThread 1 nGpus 2 graph: 0\n#  Rank  1 Group 0\n";
  for (const std::string bad : {"-5.00", "0.00", "nan", "inf"}) {
    const NcclTestsLog log =
        parseNcclTestsLog(head + " 1048576 262144 float sum -1 71.93 14.58 14.58 0 " + bad + " 14.67 14.67 0\n", "one.txt");
    ASSERT_EQ(log.runs.at(0).rows.size(), 1u) << bad;
    EXPECT_EQ(log.runs[0].rows[0].oopTime, 71.93);
    EXPECT_EQ(log.runs[0].rows[0].ipTime, 0.0) << bad;
    EXPECT_EQ(log.droppedCells, 1) << bad;
    ASSERT_EQ(log.warnings.size(), 1u) << bad;
    EXPECT_NE(log.warnings[0].find("one.txt line 4: the in-place time '" + bad + "'"), std::string::npos) << log.warnings[0];
  }
  const NcclTestsLog oop = parseNcclTestsLog(head + " 1048576 262144 float sum -1 -1 14.58 14.58 0 71.47 14.67 14.67 0\n", "o.txt");
  EXPECT_EQ(oop.droppedCells, 1);
  EXPECT_NE(oop.warnings.at(0).find("out-of-place time '-1'"), std::string::npos) << oop.warnings[0];
  const NcclTestsLog good = parseNcclTestsLog(head + " 1048576 262144 float sum -1 71.93 14.58 14.58 0 71.47 14.67 14.67 0\n", "g.txt");
  EXPECT_EQ(good.droppedCells, 0);
  EXPECT_TRUE(good.warnings.empty());
}

// Rows 16 and 18: a number read as its prefix ("71\0.93" as 71) or past 64 bits was taken; a token is
// now a number only whole. Row 5 and 17: '#  Rank N' past the bound made the run's rank count (a 2^20-rank
// topology built for one line) or, past 2^20, was dropped and the run refused as "without Rank lines".
TEST(NcclTestsLog, NumbersReadWholeAndRankLinesAreBounded) {
  const std::string head = "./all_reduce_perf\n# nThread 1 nGpus 2 graph: 0\n#  Rank  1 Group 0\n";
  const std::string nul = head + " 1048576 262144 float sum -1 71" + std::string(1, '\0') + ".93 14.58 14.58 0 71.47 14.67 14.67 0\n";
  const NcclTestsLog log = parseNcclTestsLog(nul, "nul.txt");
  EXPECT_EQ(log.runs.at(0).rows.at(0).oopTime, 0.0) << "read as 71";
  EXPECT_EQ(log.droppedCells, 1);
  const NcclTestsLog big =
      parseNcclTestsLog(head + " 99999999999999999999 262144 float sum -1 71.93 14.58 14.58 0 71.47 14.67 14.67 0\n"
                               " 1048576 262144 float sum -1 71.93 14.58 14.58 0 71.47 14.67 14.67 0\n", "big.txt");
  EXPECT_EQ(big.runs.at(0).rows.size(), 1u);
  EXPECT_EQ(big.skippedRows, 1);
  for (const std::string rank : {"40000", "1048575", "1048576", "99999999999"}) {
    const std::string text = "./all_reduce_perf\n# nThread 1 nGpus 2 graph: 0\n#  Rank " + rank +
                             " Group 0\n 8 2 float sum -1 10.00 0.00 0.00 0 10.00 0.00 0.00 0\n";
    try {
      parseNcclTestsLog(text, "ranks.txt");
      ADD_FAILURE() << "accepted rank " << rank;
    } catch (const MeasuredError& e) {
      EXPECT_NE(std::string(e.what()).find("line 3: '#  Rank " + rank + "': more than the 32768 ranks"), std::string::npos) << e.what();
    }
  }
}

// Vendor pages and srun output post the table alone: lines labelled by the launcher ("0: " of srun
// --label, "[1,0]<stdout>:" of OpenMPI --tag-output), no '# nThread' header, no '#  Rank N' lines. The
// labels are dropped, the table header starts the run, and the caller's rank count is its ranks.
TEST(NcclTestsLog, TablesPostedAloneWithLauncherLabelsAreReadOnTheGivenRanks) {
  const std::string table =
      "0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "0: #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "0:            8             2     float     sum      -1    69.12    0.00    0.00      0    72.43    0.00    0.00      0\n"
      "[1,0]<stdout>:     1048576        262144     float     sum      -1    71.93   14.58   27.33      0    71.47   14.67   27.51      0\n";
  const NcclTestsLog log = parseNcclTestsLog(table, "alone.txt", Collective::AllReduce, 16);
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_EQ(log.runs[0].nranks, 16);
  ASSERT_EQ(log.runs[0].rows.size(), 2u);
  EXPECT_EQ(log.runs[0].rows[1].oopTime, 71.93);
  EXPECT_EQ(log.skippedRows, 0);
  try {
    parseNcclTestsLog(table, "alone.txt", Collective::AllReduce);
    ADD_FAILURE() << "a run of unknown ranks was read";
  } catch (const MeasuredError& e) {
    EXPECT_NE(std::string(e.what()).find("give it: compare -g N"), std::string::npos) << e.what();
  }
  // The log's own rank lines win over the caller's count.
  const NcclTestsLog own = parseNcclTestsLog("# nThread 1 nGpus 1 graph: 0\n#  Rank  3 Group 0\n" + table, "own.txt", Collective::AllReduce, 16);
  EXPECT_EQ(own.runs.at(0).nranks, 4);
}

TEST(NcclTestsLog, OlderTablesWithoutTheRootColumnAreRead) {
  const NcclTestsLog log = parseNcclTestsLog(
      "./build/all_reduce_perf -b 1M -e 1M -g 2\n# nThread 1 nGpus 2 minBytes 1048576 maxBytes 1048576 step: 1048576(bytes) warmup iters: 5 iters: 20 validation: 1\n"
      "#   Rank  0 Pid 1 on a device  0 [0x00] Tesla V100-SXM2-16GB\n#   Rank  1 Pid 1 on a device  1 [0x00] Tesla V100-SXM2-16GB\n"
      "     1048576        262144   float     sum    50.00   20.97   20.97  0e+00    49.00   21.40   21.40  0e+00\n",
      "old.txt");
  ASSERT_EQ(log.runs.at(0).rows.size(), 1u);
  EXPECT_EQ(log.runs[0].nranks, 2);
  EXPECT_DOUBLE_EQ(log.runs[0].rows[0].ipTime, 49.0);
}

TEST(Compare, RowsHaveTheErrorAndTheDominantTerm) {
  const NcclTestsRun run = loadNcclTestsLog(dataPath(k309)).runs.at(0);
  const Topology topo(resized(*findPreset("cluster"), 0, 2));
  CompareOptions o;
  o.algorithms = {SimAlgorithm::Ring};
  const auto rows = compareRun(topo, run, o);
  ASSERT_EQ(rows.size(), 64u);  // out-of-place and in-place of 32 sizes
  for (const auto& r : rows) {
    EXPECT_NEAR(r.error, (r.predicted - r.measured) / r.measured, 1e-12);
    EXPECT_EQ(r.algorithm, "ring");
    EXPECT_GE(r.latency, 0);
    EXPECT_GE(r.bandwidth, 0);
    EXPECT_GE(r.reduction, 0);
  }
  EXPECT_EQ(rows.front().dominant, "latency");  // 8 bytes
  EXPECT_EQ(rows.back().dominant, "bandwidth");  // 16 GiB
  const auto s = summarizeByCollective(rows);
  ASSERT_EQ(s.size(), 1u);
  double logSum = 0;
  for (const auto& r : rows) logSum += std::log(r.predicted / r.measured);
  EXPECT_NEAR(s[0].geomeanRatio, std::exp(logSum / 64), 1e-12);
  // The rank count must be the topology's.
  EXPECT_THROW(compareRun(Topology(*findPreset("dgx-h100")), run, o), InvalidArgument);
}

TEST(Compare, ReductionDominatesWhereReducingIsTheSlowestPart) {
  // A topology whose links are far faster than its reduction: the large rows are reduction-bound.
  TopologySpec spec = *findPreset("dgx-h100");
  spec.compute.reduceBandwidth = 1;  // 1 GB/s
  const Topology topo(spec);
  NcclTestsRun run;
  run.source = "synthetic";
  run.nranks = 8;
  run.rows.push_back({.size = 1 << 26, .count = 1 << 24, .type = "float", .redop = "sum", .root = -1, .oopTime = 1e5});
  CompareOptions o;
  o.algorithms = {SimAlgorithm::Ring};
  const auto rows = compareRun(topo, run, o);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].dominant, "reduction");
  EXPECT_GT(rows[0].reduction, 10 * rows[0].bandwidth);
}

}  // namespace
}  // namespace cclab::sim
