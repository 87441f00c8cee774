// ArrivalReport (bench/harness/arrival_report.h) on given stats: measurements merged exactly, the
// table's rows, and the one line for a backend that records no arrivals (cuda, nccl).
#include <gtest/gtest.h>

#include "bench/harness/arrival_report.h"

namespace cclab::bench {
namespace {

using std::chrono::microseconds;

ArrivalStats twoRanks(std::int64_t calls, std::int64_t late1Us, std::int64_t max1Us, std::int64_t last1) {
  ArrivalStats s;
  s.calls = calls;
  s.ranks.resize(2);
  for (auto& r : s.ranks) r.calls = calls;
  s.ranks[1].totalLateness = microseconds(late1Us);
  s.ranks[1].maxLateness = microseconds(max1Us);
  s.ranks[1].lastCount = last1;
  s.ranks[0].lastCount = calls - last1;
  return s;
}

TEST(BenchArrivals, MeasurementsMergeExactly) {
  ArrivalReport report(Backend::Host);
  report.add(twoRanks(4, 100, 40, 3));
  report.add(twoRanks(6, 500, 90, 6));
  ASSERT_TRUE(report.total().has_value());
  const ArrivalStats& t = *report.total();
  EXPECT_EQ(t.calls, 10);
  EXPECT_EQ(t.ranks[1].calls, 10);
  EXPECT_EQ(t.ranks[1].totalLateness, microseconds(600));
  EXPECT_EQ(t.ranks[1].maxLateness, microseconds(90));
  EXPECT_EQ(t.ranks[1].lastCount, 9);
  EXPECT_EQ(t.ranks[0].lastCount, 1);
  const std::vector<std::string> lines = report.lines();
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_EQ(lines[2], "    0        10            0.00            0.00       0.100");
  EXPECT_EQ(lines[3], "    1        10           60.00           90.00       0.900");
  const nlohmann::json j = report.json();
  EXPECT_EQ(j.at("calls"), 10);
  EXPECT_DOUBLE_EQ(j.at("ranks")[1].at("mean_lateness_us").get<double>(), 60.0);
  EXPECT_EQ(j.at("ranks")[1].at("last_count"), 9);
}

TEST(BenchArrivals, ABackendWithoutArrivalsSaysSo) {
  ArrivalReport report(Backend::Cuda);
  report.add(std::nullopt);
  EXPECT_EQ(report.lines(), std::vector<std::string>{"Arrival times: not recorded by the cuda backend"});
  EXPECT_EQ(report.json(), (nlohmann::json{{"recorded", false}, {"reason", "not recorded by the cuda backend"}}));
  ArrivalReport empty(Backend::Nccl);  // no measurement at all
  EXPECT_EQ(empty.lines(), std::vector<std::string>{"Arrival times: not recorded by the nccl backend"});
}

TEST(BenchArrivals, AnIncompleteRecordIsFlagged) {
  ArrivalReport report(Backend::Host);
  ArrivalStats s = twoRanks(2, 0, 0, 1);
  s.incomplete = true;
  report.add(s);
  EXPECT_NE(report.lines().back().find("incomplete"), std::string::npos);
  EXPECT_TRUE(report.json().at("incomplete").get<bool>());
}

}  // namespace
}  // namespace cclab::bench
