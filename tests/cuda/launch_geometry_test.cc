// Launch geometry: grids from sizes and multiprocessor counts.
#include <gtest/gtest.h>

#include "collectives/core/errors.h"
#include "collectives/cuda/launch_geometry.h"

namespace cclab::cuda {
namespace {

constexpr int kH200Sms = 132;

TEST(LaunchGeometry, NothingToLaunchForZeroBytes) {
  EXPECT_EQ(reduceCopyGeometry(0, kH200Sms, 1).blocks, 0);
  EXPECT_EQ(reduceCopyGeometry(-5, kH200Sms, 1).blocks, 0);
}

TEST(LaunchGeometry, SmallMessagesGetOneBlock) {
  EXPECT_EQ(reduceCopyGeometry(8, kH200Sms, 1).blocks, 1);
  EXPECT_EQ(reduceCopyGeometry(kBlockIterBytes, kH200Sms, 1).blocks, 1);
  EXPECT_EQ(reduceCopyGeometry(kBlockIterBytes + 1, kH200Sms, 1).blocks, 2);
  EXPECT_EQ(reduceCopyGeometry(8, kH200Sms, 1).threads, kThreads);
}

TEST(LaunchGeometry, LargeMessagesFillTheDeviceSharedAmongItsRanks) {
  const std::int64_t big = std::int64_t{1} << 30;
  EXPECT_EQ(reduceCopyGeometry(big, kH200Sms, 1).blocks, kH200Sms * kBlocksPerSm);
  EXPECT_EQ(reduceCopyGeometry(big, kH200Sms, 8).blocks, kH200Sms * kBlocksPerSm / 8);
  EXPECT_EQ(reduceCopyGeometry(big, 2, 64).blocks, 1);  // never zero
}

TEST(LaunchGeometry, PackAndUnrollGiveTheBlockIteration) {
  EXPECT_EQ(kBlockIterBytes, std::int64_t{kThreads} * 16 * kUnroll);
  EXPECT_EQ(kPackBytes, 16);
}

TEST(LowLatencyGeometry, OneBlockPerRankForSmallSteps) {
  const auto g = lowLatencyGeometry(8, 8, 1000);
  EXPECT_EQ(g.blocksPerRank, 1);
  EXPECT_EQ(g.gridBlocks(8), 8);
  EXPECT_EQ(g.threads, kLlThreads);
}

TEST(LowLatencyGeometry, LargeStepsGetMoreBlocksButAllResident) {
  EXPECT_EQ(lowLatencyGeometry(4 * kLlBytesPerBlock, 2, 1000).blocksPerRank, 4);
  EXPECT_EQ(lowLatencyGeometry(std::int64_t{1} << 30, 8, 528).blocksPerRank, 66);
  EXPECT_LE(lowLatencyGeometry(std::int64_t{1} << 30, 3, 100).gridBlocks(3), 100);
}

// scripts/gpu_check checks ring x ll at 256 MiB, K = 8, to exercise the capped block count: the ring's
// 32 MiB step asks for 128 blocks per rank, more than 8 ranks get at up to 4 resident blocks per
// multiprocessor of an H200 (64 registers x 256 threads: 4 blocks fill the 64 Ki registers).
TEST(LowLatencyGeometry, TheCheckedHeadlineRunIsCapped) {
  constexpr std::int64_t kHeadlineBytes = std::int64_t{256} << 20;
  constexpr int kRanks = 8;
  const std::int64_t ringStep = kHeadlineBytes / kRanks;
  EXPECT_EQ(ringStep / kLlBytesPerBlock, 128);
  for (const int perSm : {1, 2, 3, 4}) {
    const LowLatencyGeometry g = lowLatencyGeometry(ringStep, kRanks, kH200Sms * perSm);
    EXPECT_EQ(g.blocksPerRank, kH200Sms * perSm / kRanks) << perSm;
    EXPECT_LT(g.blocksPerRank, 128) << perSm;
  }
}

TEST(LowLatencyGeometry, ThrowsWhenOneBlockPerRankDoesNotFit) {
  EXPECT_THROW(lowLatencyGeometry(8, 9, 8), InvalidArgument);
}

}  // namespace
}  // namespace cclab::cuda
