// The words of one-line errors (collectives/core/error_text.h): ranks named in order, at most eight,
// and durations in whole milliseconds.
#include "collectives/core/error_text.h"

#include <gtest/gtest.h>

#include <vector>

namespace cclab {
namespace {

TEST(ErrorText, NamedRanksNameAtMostEightInTheirOrder) {
  EXPECT_EQ(namedRanks(std::vector<int>{2}), "rank 2");
  EXPECT_EQ(namedRanks(std::vector<int>{3, 1}), "ranks 3, 1");
  EXPECT_EQ(namedRanks(std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}), "ranks 0, 1, 2, 3, 4, 5, 6, 7");
  EXPECT_EQ(namedRanks(std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}), "ranks 0, 1, 2, 3, 4, 5, 6, 7 and 5 more");
}

TEST(ErrorText, MillisecondsAreWholeAndTruncated) {
  EXPECT_EQ(millisecondsText(std::chrono::seconds(30)), "30000 ms");
  EXPECT_EQ(millisecondsText(std::chrono::microseconds(1999)), "1 ms");
  EXPECT_EQ(millisecondsText(std::chrono::nanoseconds(0)), "0 ms");
}

}  // namespace
}  // namespace cclab
