// conventions::busBwFactor and bandwidthOf: doc/PERFORMANCE.md's factors for every collective.
#include "collectives/conventions/bandwidth.h"

#include <gtest/gtest.h>

namespace cclab::conventions {
namespace {

using plan::Collective;

TEST(Bandwidth, BusBwFactorPerCollective) {
  for (int n : {1, 2, 3, 7, 8, 13}) {
    const double d = n;
    EXPECT_DOUBLE_EQ(busBwFactor(Collective::AllReduce, n), 2 * (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(busBwFactor(Collective::ReduceScatter, n), (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(busBwFactor(Collective::AllGather, n), (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(busBwFactor(Collective::Broadcast, n), 1.0) << n;
    EXPECT_DOUBLE_EQ(busBwFactor(Collective::Reduce, n), 1.0) << n;
  }
  EXPECT_DOUBLE_EQ(busBwFactor(Collective::AllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busBwFactor(Collective::AllGather, 4), 0.75);
}

TEST(Bandwidth, AlgBwIsSizeOverTimeInGBPerSecond) {
  const Bandwidth bw = bandwidthOf(Collective::AllReduce, 8, 1'000'000, 100e-6);  // 1e6 B in 100 us
  EXPECT_DOUBLE_EQ(bw.algBw, 10.0);
  EXPECT_DOUBLE_EQ(bw.busBw, 17.5);
  const Bandwidth ag = bandwidthOf(Collective::AllGather, 3, 3'000'000, 1e-3);
  EXPECT_DOUBLE_EQ(ag.algBw, 3.0);
  EXPECT_DOUBLE_EQ(ag.busBw, 2.0);
  EXPECT_DOUBLE_EQ(bandwidthOf(Collective::Broadcast, 5, 777, 1e-6).busBw, 0.777);
}

TEST(Bandwidth, NoTimeMeansNoBandwidth) {
  EXPECT_EQ(bandwidthOf(Collective::AllReduce, 4, 1024, 0).algBw, 0.0);
  EXPECT_EQ(bandwidthOf(Collective::AllReduce, 4, 1024, -1).busBw, 0.0);
}

}  // namespace
}  // namespace cclab::conventions
