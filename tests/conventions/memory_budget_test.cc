// conventions::requireMemory and the /proc/meminfo reader.
#include "collectives/conventions/memory_budget.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::conventions {
namespace {

TEST(MemoryBudget, ReadsMemAvailable) {
  EXPECT_EQ(memAvailableOf("MemTotal:       24576000 kB\nMemFree:  1 kB\nMemAvailable:   20000000 kB\n"),
            std::int64_t{20000000} * 1024);
  EXPECT_FALSE(memAvailableOf("MemTotal: 5 kB\n"));
  EXPECT_FALSE(memAvailableOf("MemAvailable: lots\n"));
  EXPECT_FALSE(memAvailableOf("MemAvailable: 12"));
  EXPECT_FALSE(memAvailableOf("MemAvailable: 99999999999999999999 kB\n"));
  const auto here = hostMemoryAvailable();
  ASSERT_TRUE(here) << "this machine has /proc/meminfo";
  EXPECT_GT(*here, 0);
}

TEST(MemoryBudget, ByteCountsSaturateInsteadOfWrapping) {
  EXPECT_EQ(saturatingBytes(3, 1000, 7), 3007);
  EXPECT_EQ(saturatingBytes(0, 1000), 0);
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(saturatingBytes(1024, std::int64_t{1} << 62), kMax);
  EXPECT_EQ(saturatingBytes(1, kMax - 1, 2), kMax);
}

TEST(MemoryBudget, RefusesWithBothNumbers) {
  EXPECT_NO_THROW(requireMemory(100, 100, "-e 8", "host memory"));
  try {
    requireMemory(std::int64_t{3} << 30, std::int64_t{1} << 30, "-e 1G on -g 3", "host memory (MemAvailable)");
    FAIL();
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("3221225472 bytes (3.0 GiB)"), std::string::npos) << what;
    EXPECT_NE(what.find("1073741824 bytes (1.0 GiB)"), std::string::npos) << what;
    EXPECT_NE(what.find("-e 1G on -g 3"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace cclab::conventions
