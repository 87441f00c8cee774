// conventions::sweepCount / sweepSizes: nccl-tests' rule, whole factors, and runaways refused at once.
#include "collectives/conventions/sweep.h"
#include "collectives/conventions/size.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "collectives/core/errors.h"

namespace cclab::conventions {
namespace {

SweepOptions sweep(std::int64_t b, std::int64_t e, std::int64_t f, std::int64_t i) { return {b, e, i, f}; }

TEST(Sweep, FactorAndIncrementAsNcclTests) {
  EXPECT_EQ(sweepSizes(sweep(8, 128, 2, 0)), (std::vector<std::int64_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(sweepSizes(sweep(8, 100, 3, 0)), (std::vector<std::int64_t>{8, 24, 72}));  // never past -e
  EXPECT_EQ(sweepSizes(sweep(0, 10, 1, 4)), (std::vector<std::int64_t>{0, 4, 8}));     // -b 0 with -i
  EXPECT_EQ(sweepSizes(sweep(5, 5, 7, 0)), (std::vector<std::int64_t>{5}));
  EXPECT_EQ(sweepSizes(sweep(0, 0, 2, 0)), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(sweepSizes(SweepOptions{}), (std::vector<std::int64_t>{kDefaultSweepBytes}));
  // A factor > 1 wins over -i (nccl-tests).
  EXPECT_EQ(sweepSizes(sweep(1, 4, 2, 1)), (std::vector<std::int64_t>{1, 2, 4}));
}

TEST(Sweep, CountMatchesTheListForRandomSweeps) {
  std::uint64_t x = 88172645463325252ULL;
  for (int k = 0; k < 500; ++k) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const std::int64_t b = static_cast<std::int64_t>(x % 1000) + 1;
    const std::int64_t e = b + static_cast<std::int64_t>((x >> 10) % 100000);
    const std::int64_t f = static_cast<std::int64_t>((x >> 30) % 5) + 1;
    const std::int64_t i = static_cast<std::int64_t>((x >> 40) % 97) + 11;
    const SweepOptions s = sweep(b, e, f, i);
    const auto sizes = sweepSizes(s);
    ASSERT_EQ(sizes.size(), sweepCount(s));
    EXPECT_EQ(sizes.front(), b);
    EXPECT_LE(sizes.back(), e);
    const std::int64_t after = f > 1 ? sizes.back() * f : sizes.back() + i;
    EXPECT_GT(after, e) << "a size <= -e was left out";
  }
}

TEST(Sweep, RunawaysAreRefusedBeforeAnySizeIsGenerated) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(sweepCount(sweep(0, std::int64_t{1} << 30, 1, 1)), InvalidArgument);  // -b 0 -e 1G -i 1
  EXPECT_THROW(sweepSizes(sweep(0, std::int64_t{1} << 30, 1, 1)), InvalidArgument);
  EXPECT_THROW(sweepSizes(sweep(1, kMaxSizeBytes, 1, 1)), InvalidArgument);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  // The limit itself: kMaxSweepSizes sizes pass, one more does not.
  EXPECT_EQ(sweepCount(sweep(0, kMaxSweepSizes - 1, 1, 1)), kMaxSweepSizes);
  EXPECT_THROW(sweepCount(sweep(0, kMaxSweepSizes, 1, 1)), InvalidArgument);
}

TEST(Sweep, HugeSizesDoNotOverflow) {
  const std::int64_t big = std::int64_t{1} << 62;
  EXPECT_EQ(sweepSizes(sweep(1, big, 2, 0)).size(), 63U);
  EXPECT_EQ(sweepSizes(sweep(big - 1, big, 1, big)), (std::vector<std::int64_t>{big - 1}));
  EXPECT_EQ(sweepSizes(sweep(3, big, kMaxStepFactor, 0)).size(), 2U);
}

TEST(Sweep, BadCombinationsAreRefused) {
  EXPECT_THROW(sweepCount(sweep(0, 8, 2, 0)), InvalidArgument);  // 0 times 2 stays 0
  EXPECT_THROW(sweepCount(sweep(16, 8, 2, 0)), InvalidArgument);
  EXPECT_THROW(sweepCount(sweep(-1, 8, 2, 0)), InvalidArgument);
  EXPECT_THROW(sweepCount(sweep(8, 64, 1, 0)), InvalidArgument);  // no step
  EXPECT_THROW(sweepCount(sweep(8, 64, 0, 4)), InvalidArgument);
}

TEST(Sweep, StepFactorIsAWholeNumber) {
  EXPECT_EQ(parseStepFactor("2", "-f"), 2);
  EXPECT_EQ(parseStepFactor("1", "-f"), 1);
  EXPECT_EQ(parseStepFactor("4294967296", "-f"), kMaxStepFactor);
  for (const char* bad : {"", "0", "-2", "1.5", "2.0", "nan", "inf", "1e3", "2x", "4294967297", "99999999999999999999"})
    EXPECT_THROW(parseStepFactor(bad, "-f"), InvalidArgument) << bad;
}

}  // namespace
}  // namespace cclab::conventions
