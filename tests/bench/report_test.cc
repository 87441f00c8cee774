// The report library on its own: size parsing, the sweep, nccl-tests' count conventions and busbw
// factors, and the table's exact format.
#include <gtest/gtest.h>

#include <cstdio>

#include "bench/report/collective_shape.h"
#include "bench/report/iteration.h"
#include "bench/report/sweep.h"
#include "bench/report/table.h"
#include "bench/report/usage_error.h"
#include "bench/report/value_parse.h"

namespace cclab::bench {
namespace {

using plan::Collective;

TEST(ParseSize, AcceptsSuffixesInPowersOf1024) {
  EXPECT_EQ(parseSize("8"), 8);
  EXPECT_EQ(parseSize("1K"), 1024);
  EXPECT_EQ(parseSize("1k"), 1024);
  EXPECT_EQ(parseSize("256M"), 256LL << 20);
  EXPECT_EQ(parseSize("1G"), 1LL << 30);
  EXPECT_EQ(parseSize("64MiB"), 64LL << 20);
  EXPECT_EQ(parseSize("2KB"), 2048);
  EXPECT_EQ(parseSize("1.5K"), 1536);
  EXPECT_EQ(parseSize("0"), 0);
}

TEST(ParseSize, RejectsWhatIsNotASize) {
  for (const char* bad : {"", "x", "-5", "1T", "8 M", "1.2.3", "M", "1Mx", "99999999999G"})
    EXPECT_THROW(parseSize(bad), UsageError) << bad;
}

TEST(ParseInteger, IsStrictAndBounded) {
  EXPECT_EQ(parseInteger("42", 0, 100, "n"), 42);
  EXPECT_THROW(parseInteger("4x", 0, 100, "n"), UsageError);
  EXPECT_THROW(parseInteger("", 0, 100, "n"), UsageError);
  EXPECT_THROW(parseInteger("101", 0, 100, "n"), UsageError);
  EXPECT_THROW(parseInteger("-1", 0, 100, "n"), UsageError);
}

TEST(Sweep, MultipliesOrAddsAsNcclTests) {
  EXPECT_EQ(sweepSizes({8, 128, 0, 2}), (std::vector<std::int64_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(sweepSizes({8, 100, 0, 4}), (std::vector<std::int64_t>{8, 32}));
  EXPECT_EQ(sweepSizes({10, 40, 10, 1}), (std::vector<std::int64_t>{10, 20, 30, 40}));
  EXPECT_EQ(sweepSizes({0, 0, 0, 2}), (std::vector<std::int64_t>{0}));
}

TEST(Sweep, RejectsSweepsThatCannotRun) {
  EXPECT_THROW(validate(SweepOptions{1 << 30, 8, 1, 2}), UsageError);      // -b > -e
  EXPECT_THROW(validate(SweepOptions{0, 8, 1, 2}), UsageError);            // 0 * factor never grows
  EXPECT_THROW(validate(SweepOptions{8, 64, 0, 1}), UsageError);           // zero increment
  EXPECT_THROW(validate(SweepOptions{8, 64, 8, 0}), UsageError);           // zero factor
  EXPECT_THROW(validate(SweepOptions{1, 1 << 30, 1, 1}), UsageError);      // a billion sizes
}

TEST(Shape, FollowsNcclTestsCounts) {
  // allreduce: count = bytes / 4, size rounds down to whole elements
  auto s = shapeOf(Collective::AllReduce, 1027, 4, 3);
  EXPECT_EQ(s.count, 256);
  EXPECT_EQ(s.sizeBytes, 1024);
  // reducescatter: per-rank count, size = the whole input
  s = shapeOf(Collective::ReduceScatter, 1024, 4, 3);
  EXPECT_EQ(s.count, 85);
  EXPECT_EQ(s.sizeBytes, 85 * 4 * 3);
  EXPECT_EQ(s.inputCount, 255);
  EXPECT_EQ(s.outputCount, 85);
  // allgather: per-rank count, size = the whole output
  s = shapeOf(Collective::AllGather, 1024, 4, 3);
  EXPECT_EQ(s.count, 85);
  EXPECT_EQ(s.sizeBytes, 85 * 4 * 3);
  EXPECT_EQ(s.outputCount, 255);
  s = shapeOf(Collective::Broadcast, 8, 8, 4);
  EXPECT_EQ(s.count, 1);
}

TEST(Shape, BusBandwidthFactorsOfPerformanceMd) {
  EXPECT_DOUBLE_EQ(busBwFactor(Collective::AllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busBwFactor(Collective::ReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busBwFactor(Collective::AllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busBwFactor(Collective::Broadcast, 4), 1.0);
  EXPECT_DOUBLE_EQ(busBwFactor(Collective::Reduce, 4), 1.0);
  const auto s = shapeOf(Collective::AllGather, 4000, 4, 4);  // 1000 floats in all
  const Bandwidth bw = bandwidthOf(Collective::AllGather, s, 4, 4, 1e-6);
  EXPECT_DOUBLE_EQ(bw.algBw, 4.0);  // 4000 B in 1 us = 4 GB/s
  EXPECT_DOUBLE_EQ(bw.busBw, 3.0);
}

TEST(Iterations, ScaleDownForBigSizesOnlyWhenAsked) {
  IterationOptions it;
  EXPECT_EQ(it.itersAt(1LL << 30), 20);
  it.iterBytes = 1LL << 30;
  EXPECT_EQ(it.itersAt(8), 20);
  EXPECT_EQ(it.itersAt(256LL << 20), 4);
  EXPECT_EQ(it.itersAt(1LL << 30), kMinScaledIters);
  EXPECT_EQ(it.warmupAt(1LL << 30), 1);
}

TEST(Table, TimeColumnPrecisionAsNcclTests) {
  EXPECT_EQ(formatTimeUs(5.123), "   5.12");
  EXPECT_EQ(formatTimeUs(123.45), "  123.5");
  EXPECT_EQ(formatTimeUs(12345.6), "  12346");
}

TEST(Table, HeaderAndRowsAreNcclTestsColumns) {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  TablePrinter t(f);
  t.columnHeader();
  t.row({8, 2, "float", "sum", -1, {5.1, 0.0, 0.0, 0}, {4.98, 0.0, 0.0, std::nullopt}});
  ResultLog log;
  t.footer(log);
  std::fclose(f);
  const std::string out(buf, len);
  std::free(buf);
  EXPECT_NE(out.find("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
                     "algbw   busbw #wrong\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
                     "(GB/s)  (GB/s)\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("           8             2     float     sum      -1     5.10    0.00    0.00      0     4.98    "
                     "0.00    0.00    N/A\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace cclab::bench
