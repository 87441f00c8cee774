// conventions::Table: nccl-tests' columns for bench and the predicted table, and numbers of any size.
#include "collectives/conventions/table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace cclab::conventions {
namespace {

TEST(TableNumbers, TimeColumnPrecisionAsNcclTests) {
  EXPECT_EQ(formatTimeUs(5.123), "   5.12");
  EXPECT_EQ(formatTimeUs(123.45), "  123.5");
  EXPECT_EQ(formatTimeUs(12345.6), "  12346");
  EXPECT_EQ(formatTimeUs(12345678.0), "12345678");  // a little wider, as printf would
}

TEST(TableNumbers, HugeValuesTurnScientificNeverHundredsOfDigits) {
  EXPECT_EQ(formatTimeUs(1e308), "1.00e+308");
  EXPECT_EQ(formatNumber(1e308, 6, 2), "1.00e+308");
  EXPECT_EQ(formatNumber(-1e300, 6, 2), "-1.00e+300");
  EXPECT_EQ(formatNumber(1234.5678, 6, 2), "1234.57");  // widens by one: still fixed
  EXPECT_EQ(formatNumber(12345678.9, 6, 2), "1.23e+07");
  EXPECT_EQ(formatNumber(std::numeric_limits<double>::max(), 7, 0), "1.80e+308");
}

TEST(TableNumbers, TinyValuesPrintAsNcclTestsZero) {
  EXPECT_EQ(formatNumber(1e-300, 6, 2), "  0.00");
  EXPECT_EQ(formatNumber(std::numeric_limits<double>::denorm_min(), 6, 2), "  0.00");
  EXPECT_EQ(formatTimeUs(1e-300), "   0.00");
}

TEST(TableNumbers, NonFiniteValuesAreSpelledOut) {
  EXPECT_EQ(formatNumber(std::numeric_limits<double>::infinity(), 6, 2), "   inf");
  EXPECT_EQ(formatNumber(-std::numeric_limits<double>::infinity(), 6, 2), "  -inf");
  EXPECT_EQ(formatNumber(std::nan(""), 6, 2), "   nan");
  EXPECT_EQ(formatTimeUs(std::numeric_limits<double>::infinity()), "    inf");
}

TEST(Table, BenchHeaderRowsAndFooterAreNcclTestsColumns) {
  const Table t;
  const std::string header = t.columnHeader();
  EXPECT_NE(header.find("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
                        "algbw   busbw #wrong\n"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
                        "(GB/s)  (GB/s)\n"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("out-of-place"), std::string::npos);
  EXPECT_EQ(t.row({8, 2, "float", "sum", -1, {5.1, 0.0, 0.0, 0}, {4.98, 0.0, 0.0, std::nullopt}}),
            "           8             2     float     sum      -1     5.10    0.00    0.00      0     4.98    0.00    "
            "0.00    N/A\n");
  ResultLog log;
  EXPECT_EQ(t.footer(log), "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0\n#\n");
  log.add({8, 2, "float", "sum", -1, {5, 1, 2, 0}, {5, 1, 4, 3}});
  EXPECT_EQ(t.footer(log), "# Out of bounds values : 1 FAILED\n# Avg bus bandwidth    : 3\n#\n");
  EXPECT_EQ(Table::headerLine("nThread 1   "), "# nThread 1\n");
}

TEST(Table, PredictedTableHasOneGroupAndNoCheck) {
  const Table t(TableStyle{{"predicted"}, "-", true});
  const std::string header = t.columnHeader();
  EXPECT_NE(header.find("predicted"), std::string::npos);
  EXPECT_EQ(header.find("in-place"), std::string::npos);
  const ResultRow r{1024, 256, "float", "sum", -1, {1e308, 1e-300, std::nan(""), std::nullopt}, {}};
  EXPECT_EQ(t.row(r), "        1024           256     float     sum      -1  1.00e+308    0.00     nan      -\n");
  ResultLog log;
  log.add({1024, 256, "float", "sum", -1, {12.0, 1.0, 1.5, std::nullopt}, {12.0, 1.0, 1.5, std::nullopt}});
  EXPECT_EQ(t.footer(log), "# Out of bounds values : - (predicted, not checked)\n# Avg bus bandwidth    : 1.5000 (predicted)\n#\n");
}

}  // namespace
}  // namespace cclab::conventions
