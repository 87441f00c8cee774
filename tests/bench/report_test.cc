// The report library on its own: the size and sweep flags as UsageErrors, integers, nccl-tests' count
// conventions and iterations (sizes, the sweep, busbw and the table: tests/conventions).
#include <gtest/gtest.h>

#include <cstdio>

#include "bench/report/collective_shape.h"
#include "bench/report/iteration.h"
#include "bench/report/common_flags.h"
#include "bench/report/usage_error.h"
#include "bench/report/value_parse.h"

namespace cclab::bench {
namespace {

using plan::Collective;

TEST(ParseSizeFlag, IsTheConventionsParserAsAUsageError) {
  EXPECT_EQ(parseSizeFlag("64MiB", "-b"), 64LL << 20);
  EXPECT_EQ(parseSizeFlag("1T", "-b"), 1LL << 40);
  try {
    parseSizeFlag("nan", "-b/--minbytes");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("-b/--minbytes: 'nan'", 0), 0U) << e.what();
  }
}

TEST(ParseInteger, IsStrictAndBounded) {
  EXPECT_EQ(parseInteger("42", 0, 100, "n"), 42);
  EXPECT_THROW(parseInteger("4x", 0, 100, "n"), UsageError);
  EXPECT_THROW(parseInteger("", 0, 100, "n"), UsageError);
  EXPECT_THROW(parseInteger("101", 0, 100, "n"), UsageError);
  EXPECT_THROW(parseInteger("-1", 0, 100, "n"), UsageError);
}

TEST(Sweep, ChecksAreUsageErrors) {
  EXPECT_EQ(sizesOf(SweepOptions{8, 128, 0, 2}), (std::vector<std::int64_t>{8, 16, 32, 64, 128}));
  EXPECT_THROW(validate(SweepOptions{1 << 30, 8, 1, 2}), UsageError);  // -b > -e
  EXPECT_THROW(validate(SweepOptions{0, 8, 1, 2}), UsageError);        // 0 * factor never grows
  EXPECT_THROW(validate(SweepOptions{0, 1 << 30, 1, 1}), UsageError);  // a billion sizes
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

TEST(Shape, SizeColumnIsTheBandwidthsS) {
  const auto s = shapeOf(Collective::AllGather, 4000, 4, 4);  // 1000 floats in all
  const conventions::Bandwidth bw = conventions::bandwidthOf(Collective::AllGather, 4, s.sizeBytes, 1e-6);
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

}  // namespace
}  // namespace cclab::bench
