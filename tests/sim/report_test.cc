#include <gtest/gtest.h>

#include "sim/measured.h"
#include "sim/report.h"

using namespace cclab;
using namespace cclab::sim;

TEST(Report, Sizes) {
  EXPECT_EQ(parseBytes("8"), 8);
  EXPECT_EQ(parseBytes("64K"), 65536);
  EXPECT_EQ(parseBytes("1M"), 1 << 20);
  EXPECT_EQ(parseBytes("1G"), Bytes{1} << 30);
  EXPECT_EQ(parseBytes("2GB"), Bytes{2} << 30);
  EXPECT_THROW(parseBytes("lots"), cclab::InvalidArgument);
  EXPECT_THROW(parseBytes("3X"), cclab::InvalidArgument);
  EXPECT_EQ(humanBytes(1536), "1.5K");
  EXPECT_EQ(humanBytes(Bytes{1} << 30), "1G");
}

TEST(Report, SweepIsTheConventionsSweep) {
  EXPECT_EQ(sizeSweep("8", "64", "2", "0"), (std::vector<Bytes>{8, 16, 32, 64}));
  EXPECT_EQ(sizeSweep("0", "10", "2", "4"), (std::vector<Bytes>{0, 4, 8}));  // an increment replaces the factor
  EXPECT_THROW(sizeSweep("0", "1G", "2", "1"), cclab::InvalidArgument);     // a billion sizes: refused at once
  EXPECT_THROW(sizeSweep("8", "64", "1.5", "0"), cclab::InvalidArgument);   // whole factors only
  EXPECT_THROW(sizeSweep("nan", "64", "2", "0"), cclab::InvalidArgument);
}

TEST(Report, HugePredictionsPrintInScientificNotation) {
  PredictedRun run;
  run.rows = {makeRow(plan::Collective::AllReduce, 8, 1024, 4, 1e308)};
  const std::string table = formatTable(run);
  EXPECT_NE(table.find("1.00e+308"), std::string::npos) << table;
  EXPECT_LT(table.size(), 1000U) << table;
}

TEST(Report, RowUsesNcclTestsBandwidths) {
  const auto r = makeRow(plan::Collective::AllReduce, 8, 1'000'000, 4, 100.0);  // 1e6 B in 100 µs = 10 GB/s
  EXPECT_DOUBLE_EQ(r.algbw, 10.0);
  EXPECT_DOUBLE_EQ(r.busbw, 10.0 * 2 * 7 / 8);
  EXPECT_EQ(r.count, 250'000);
  EXPECT_DOUBLE_EQ(makeRow(plan::Collective::AllGather, 4, 1'000'000, 4, 100.0).busbw, 7.5);
  EXPECT_DOUBLE_EQ(makeRow(plan::Collective::Broadcast, 4, 1'000'000, 4, 100.0).busbw, 10.0);
}

TEST(Report, TableAndJsonReadBack) {
  PredictedRun run;
  run.algo = "ring";
  run.nranks = 8;
  run.topology = "dgx-h100";
  run.model = "replay";
  run.rows = {makeRow(plan::Collective::AllReduce, 8, 1024, 4, 12.0), makeRow(plan::Collective::AllReduce, 8, 2048, 4, 13.0)};
  const std::string table = formatTable(run);
  EXPECT_NE(table.find("PREDICTED"), std::string::npos);
  EXPECT_NE(table.find("#wrong"), std::string::npos);
  EXPECT_NE(table.find("busbw"), std::string::npos);
  EXPECT_EQ(table.find(" N/A"), std::string::npos);
  const auto j = toJson(run);
  EXPECT_EQ(j["predicted"], true);
  EXPECT_TRUE(j["results"][0]["oop"]["wrong"].is_null());
  const Measurement m = parseMeasurement(j, "predicted");  // the same reader reads both
  ASSERT_EQ(m.points.size(), 2U);
  EXPECT_DOUBLE_EQ(m.points[1].time, 13.0);
  EXPECT_EQ(m.nranks, 8);
}
