// Rank -> device mapping (round-robin) and the default slice.
#include <gtest/gtest.h>

#include "collectives/core/errors.h"
#include "collectives/cuda/device_map.h"
#include "collectives/cuda/slicing.h"

namespace cclab::cuda {
namespace {

TEST(DeviceMap, EightVirtualRanksOnOneDevice) {
  const DeviceMap m(8, 1);
  EXPECT_EQ(m.devicesUsed(), 1);
  EXPECT_EQ(m.maxRanksPerDevice(), 8);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(m.device(r), 0);
    EXPECT_EQ(m.localIndex(r), r);
  }
  EXPECT_EQ(m.ranksOf(0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(DeviceMap, OneRankPerDevice) {
  const DeviceMap m(8, 8);
  EXPECT_EQ(m.devicesUsed(), 8);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(m.device(r), r);
    EXPECT_EQ(m.localIndex(r), 0);
    EXPECT_EQ(m.ranksOn(r), 1);
  }
}

TEST(DeviceMap, RoundRobinWhenRanksDoNotDivide) {
  const DeviceMap m(5, 2);
  EXPECT_EQ(m.device(0), 0);
  EXPECT_EQ(m.device(1), 1);
  EXPECT_EQ(m.device(4), 0);
  EXPECT_EQ(m.localIndex(4), 2);
  EXPECT_EQ(m.ranksOn(0), 3);
  EXPECT_EQ(m.ranksOn(1), 2);
  EXPECT_EQ(m.ranksOf(1), (std::vector<int>{1, 3}));
  EXPECT_EQ(m.maxRanksPerDevice(), 3);
  EXPECT_TRUE(m.sameDevice(0, 2));
  EXPECT_FALSE(m.sameDevice(0, 1));
}

TEST(DeviceMap, FewerRanksThanDevicesUsesOnlyThoseDevices) {
  const DeviceMap m(2, 8);
  EXPECT_EQ(m.devicesUsed(), 2);
  EXPECT_EQ(m.ranksOn(5), 0);
  EXPECT_TRUE(m.ranksOf(5).empty());
}

TEST(DeviceMap, RejectsBadInput) {
  EXPECT_THROW(DeviceMap(0, 1), InvalidArgument);
  EXPECT_THROW(DeviceMap(2, 0), InvalidArgument);
  const DeviceMap m(4, 2);
  EXPECT_THROW((void)m.device(4), InvalidArgument);
  EXPECT_THROW((void)m.localIndex(-1), InvalidArgument);
}

TEST(Slicing, RequestedSliceWinsElseWholeOpsOnOneDevice) {
  EXPECT_EQ(sliceElemsFor(1024, 4, 1), 256);
  EXPECT_EQ(sliceElemsFor(3, 4, 1), 1);  // never 0 when asked for
  EXPECT_EQ(sliceElemsFor(0, 4, 1), 0);
  EXPECT_EQ(sliceElemsFor(0, 4, 8), static_cast<std::int64_t>(kCrossDeviceSliceBytes / 4));
  EXPECT_EQ(sliceElemsFor(0, 2, 2), static_cast<std::int64_t>(kCrossDeviceSliceBytes / 2));
}

}  // namespace
}  // namespace cclab::cuda
