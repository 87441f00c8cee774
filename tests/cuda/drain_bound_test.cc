// The drain bound of the CUDA communicator's synchronize(): it must outlast the low-latency kernel's
// own report (deadline plus two grace periods), or a late rank is reported as "stream did not drain".
#include <gtest/gtest.h>

#include <chrono>

#include "collectives/cuda/drain_bound.h"

namespace cclab::cuda {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST(DrainBound, GraceIsAQuarterOfTheTimeoutAndAtLeastOneMillisecond) {
  EXPECT_EQ(llGracePeriod(milliseconds(100)), milliseconds(25));
  EXPECT_EQ(llGracePeriod(milliseconds(30000)), milliseconds(7500));
  EXPECT_EQ(llGracePeriod(milliseconds(3)), milliseconds(1));  // 0.75 ms floored up to the minimum
  EXPECT_EQ(llGracePeriod(milliseconds(0)), milliseconds(1));
}

TEST(DrainBound, OneCallWaitsPastTheLastReportLevel) {
  // The level-2 waiter may report at deadline + 2 grace periods; the host waits that plus its margin.
  EXPECT_EQ(llReportBound(milliseconds(3000)), milliseconds(3000 + 2 * 750));
  EXPECT_EQ(drainBound(milliseconds(3000), microseconds(0), 1), milliseconds(3000 + 2 * 750) + kDrainMargin);
  EXPECT_EQ(drainBound(milliseconds(100), microseconds(0), 1), milliseconds(150) + kDrainMargin);
  for (const int ms : {1, 7, 100, 999, 3000, 20000, 30000, 86400000}) {
    const milliseconds t(ms);
    EXPECT_GT(nanoseconds(drainBound(t, microseconds(0), 1)), nanoseconds(t) + 2 * llGracePeriod(t)) << ms;
  }
}

TEST(DrainBound, TheDefaultTimeoutNoLongerGivesUpBeforeTheKernelReports) {
  // The bound this replaces: timeout x calls + 1 s, i.e. 31 s for one call with the 30 s default,
  // while the kernel may report as late as 45 s.
  const milliseconds old = milliseconds(30000) + seconds(1);
  EXPECT_LT(nanoseconds(old), llReportBound(milliseconds(30000)));
  EXPECT_GT(drainBound(milliseconds(30000), microseconds(0), 1), llReportBound(milliseconds(30000)));
}

TEST(DrainBound, QueuedCallsAndTheStragglerScaleIt) {
  const milliseconds t(200);
  const milliseconds perCall = milliseconds(200 + 2 * 50) + milliseconds(2);  // + 1.5 ms straggler, rounded up
  EXPECT_EQ(drainBound(t, microseconds(1500), 1), perCall + kDrainMargin);
  EXPECT_EQ(drainBound(t, microseconds(1500), 7), 7 * perCall + kDrainMargin);
  EXPECT_EQ(drainBound(t, microseconds(0), 0), drainBound(t, microseconds(0), 1));  // no call counts as one
  EXPECT_EQ(drainBound(t, microseconds(0), -3), drainBound(t, microseconds(0), 1));
  EXPECT_EQ(drainBound(t, microseconds(-5), 1), drainBound(t, microseconds(0), 1));
}

TEST(DrainBound, SaturatesInsteadOfOverflowing) {
  const milliseconds day(86400000);
  EXPECT_EQ(drainBound(day, microseconds(0), std::int64_t{1} << 40), milliseconds(kMaxDrainBound));
  EXPECT_EQ(drainBound(day, microseconds(0), INT64_MAX), milliseconds(kMaxDrainBound));
  EXPECT_LT(drainBound(day, microseconds(0), 1), milliseconds(kMaxDrainBound));
}

}  // namespace
}  // namespace cclab::cuda
