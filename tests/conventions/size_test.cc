// conventions::parseSize: every spelling, the 1024 base, exact fractions, overflow, and refusals.
#include "collectives/conventions/size.h"

#include <gtest/gtest.h>

#include <string>

#include "collectives/core/errors.h"

namespace cclab::conventions {
namespace {

constexpr std::int64_t kKiB = 1024;

TEST(Size, EverySuffixSpellingIsBinary) {
  EXPECT_EQ(parseSize("0", "-b"), 0);
  EXPECT_EQ(parseSize("8", "-b"), 8);
  EXPECT_EQ(parseSize("8B", "-b"), 8);
  EXPECT_EQ(parseSize("1000", "-b"), 1000);  // no decimal units anywhere
  const char* kLetters[] = {"K", "M", "G", "T"};
  for (int i = 0; i < 4; ++i) {
    const std::int64_t unit = std::int64_t{1} << (10 * (i + 1));
    const std::string u = kLetters[i];
    std::string lower = u;
    lower[0] = static_cast<char>(lower[0] + ('a' - 'A'));
    for (const std::string& suffix : {u, lower, u + "B", u + "b", lower + "b", u + "iB", u + "ib", lower + "iB"})
      EXPECT_EQ(parseSize("3" + suffix, "-b"), 3 * unit) << suffix;
  }
  EXPECT_EQ(parseSize("64MiB", "-b"), 64 * kKiB * kKiB);
  EXPECT_EQ(parseSize("1.", "-b"), 1);
}

TEST(Size, FractionsOnlyWhenTheyLandOnAWholeByte) {
  EXPECT_EQ(parseSize("1.5K", "-b"), 1536);
  EXPECT_EQ(parseSize("0.5K", "-b"), 512);
  EXPECT_EQ(parseSize("2.25M", "-b"), 2359296);
  EXPECT_EQ(parseSize("0.125K", "-b"), 128);
  EXPECT_THROW(parseSize("0.125", "-b"), InvalidArgument);  // an eighth of a byte
  EXPECT_THROW(parseSize("1.0001K", "-b"), InvalidArgument);
}

TEST(Size, Refusals) {
  for (const char* bad : {"", "-8", "-1K", "nan", "NaN", "inf", "-inf", "1e3", "1.3", "0.3K", "0.1", "1X", "1KK",
                          "1KiBB", "K", ".", " 8", "8 ", "+8", "0x10", "1,5K", "9E", "1P", "1.5.5"})
    EXPECT_THROW(parseSize(bad, "-b"), InvalidArgument) << "'" << bad << "'";
}

TEST(Size, OverflowIsRefusedNotWrapped) {
  EXPECT_EQ(parseSize("4194304T", "-e"), kMaxSizeBytes);  // 2^22 TiB = 2^62
  EXPECT_THROW(parseSize("4194305T", "-e"), InvalidArgument);
  EXPECT_THROW(parseSize("4194304.5T", "-e"), InvalidArgument);
  EXPECT_THROW(parseSize("4611686018427387905", "-e"), InvalidArgument);  // 2^62 + 1
  EXPECT_THROW(parseSize("99999999999999999999999999", "-e"), InvalidArgument);
  EXPECT_THROW(parseSize("18446744073709551616G", "-e"), InvalidArgument);
  EXPECT_THROW(parseSize("1.00000000000000000001K", "-e"), InvalidArgument);  // too many decimals
}

TEST(Size, TheMessageIsOneLineNamingTheFlagAndText) {
  try {
    parseSize("12Q", "-b/--minbytes");
    FAIL();
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("-b/--minbytes: '12Q'", 0), 0U) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

TEST(Size, FormatBytesPicksTheLargestDividingUnit) {
  EXPECT_EQ(formatBytes(8), "8 B");
  EXPECT_EQ(formatBytes(1536), "1536 B");
  EXPECT_EQ(formatBytes(256 * kKiB), "256 KiB");
  EXPECT_EQ(formatBytes(std::int64_t{3} << 40), "3 TiB");
  EXPECT_EQ(formatBytes(0), "0 B");
}

}  // namespace
}  // namespace cclab::conventions
