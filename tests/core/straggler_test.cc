// The one straggler syntax: every key, the old spellings per tool, round trips, and every refusal.
#include "collectives/core/straggler.h"

#include <gtest/gtest.h>

#include "collectives/core/errors.h"

namespace cclab {
namespace {

using std::chrono::nanoseconds;

TEST(Straggler, KeysAndUnits) {
  auto s = parseStraggler("3:delay=100us", BareNumber::ComputeFactor);
  EXPECT_EQ(s.rank, 3);
  EXPECT_EQ(s.startDelay, nanoseconds(100'000));
  EXPECT_EQ(s.computeFactor, 1.0);
  EXPECT_TRUE(s.active());
  EXPECT_EQ(parseStraggler("0:delay=2ms", BareNumber::ComputeFactor).startDelay, nanoseconds(2'000'000));
  EXPECT_EQ(parseStraggler("0:delay=1.5s", BareNumber::ComputeFactor).startDelay, nanoseconds(1'500'000'000));
  EXPECT_EQ(parseStraggler("0:delay=250ns", BareNumber::ComputeFactor).startDelay, nanoseconds(250));
  EXPECT_EQ(parseStraggler("0:delay=7", BareNumber::ComputeFactor).startDelay, nanoseconds(7'000));
  auto c = parseStraggler("2:delay=1ms,compute=1.4,link=2.5", BareNumber::DelayMicroseconds);
  EXPECT_EQ(c.rank, 2);
  EXPECT_EQ(c.startDelay, nanoseconds(1'000'000));
  EXPECT_DOUBLE_EQ(c.computeFactor, 1.4);
  EXPECT_DOUBLE_EQ(c.linkFactor, 2.5);
}

TEST(Straggler, OldSpellingsKeepTheirToolsMeaning) {
  auto bench = parseStraggler("1:500", BareNumber::DelayMicroseconds);
  EXPECT_EQ(bench.startDelay, nanoseconds(500'000));
  EXPECT_EQ(bench.computeFactor, 1.0);
  auto trainer = parseStraggler("1:1.4", BareNumber::ComputeFactor);
  EXPECT_DOUBLE_EQ(trainer.computeFactor, 1.4);
  EXPECT_EQ(trainer.startDelay, nanoseconds(0));
  EXPECT_EQ(trainer.linkFactor, 1.0);
  auto sim = parseStraggler("5:2", BareNumber::ComputeAndLinkFactor);
  EXPECT_DOUBLE_EQ(sim.computeFactor, 2.0);
  EXPECT_DOUBLE_EQ(sim.linkFactor, 2.0);
}

TEST(Straggler, NoneIsInactive) {
  EXPECT_FALSE(parseStraggler("none", BareNumber::DelayMicroseconds).active());
  EXPECT_FALSE(parseStraggler("", BareNumber::DelayMicroseconds).active());
  EXPECT_FALSE(parseStraggler("1:compute=1", BareNumber::DelayMicroseconds).active());
  EXPECT_EQ(format(Straggler{}), "none");
}

TEST(Straggler, FormatReadsBack) {
  for (const char* text : {"3:delay=100us", "1:compute=1.4", "2:delay=1000us,link=2", "0:delay=250ns",
                           "4:delay=1.5us,compute=3,link=1.25"}) {
    auto s = parseStraggler(text, BareNumber::DelayMicroseconds);
    auto again = parseStraggler(format(s), BareNumber::DelayMicroseconds);
    EXPECT_EQ(again.rank, s.rank) << text;
    EXPECT_EQ(again.startDelay, s.startDelay) << text << " -> " << format(s);
    EXPECT_EQ(again.computeFactor, s.computeFactor) << text;
    EXPECT_EQ(again.linkFactor, s.linkFactor) << text;
  }
  EXPECT_EQ(format(parseStraggler("3:delay=100us", BareNumber::DelayMicroseconds)), "3:delay=100us");
  EXPECT_EQ(format(parseStraggler("1:20000000", BareNumber::DelayMicroseconds)), "1:delay=20s");
  EXPECT_EQ(format(parseStraggler("1:delay=1500us", BareNumber::DelayMicroseconds)), "1:delay=1500us");
  EXPECT_EQ(format(parseStraggler("1:delay=2ms", BareNumber::DelayMicroseconds)), "1:delay=2ms");
  EXPECT_EQ(format(parseStraggler("1:delay=1.5us", BareNumber::DelayMicroseconds)), "1:delay=1500ns");
}

TEST(Straggler, RefusesWithOneLine) {
  for (const char* text : {"1", ":5", "x:5", "-1:5", "1:", "1:delay=", "1:delay=5h", "1:delay=-3us",
                           "1:delay=3601s", "1:compute=0.5", "1:compute=nan", "1:compute=inf", "1:link=1e9",
                           "1:speed=2", "1:compute=1.4,", "1:compute", "1.5:delay=1us", "1:delay=1e400us"}) {
    try {
      parseStraggler(text, BareNumber::DelayMicroseconds);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const InvalidArgument& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(text), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(parseStraggler("1:0.5", BareNumber::ComputeFactor), InvalidArgument);
  EXPECT_THROW(parseStraggler("1:-5", BareNumber::DelayMicroseconds), InvalidArgument);
}

// Found by fuzz/straggler_parse_fuzz: a malformed number inside a delay ("0..5") was read as NaN and
// rounded to a huge negative delay instead of being refused.
TEST(Straggler, FuzzFoundMalformedDelayIsRefused) {
  for (const char* text : {"0:delay=0..5s,compute=2,link=3", "1:delay=1.2.3us", "1:delay=1+2ms"})
    EXPECT_THROW(parseStraggler(text, BareNumber::DelayMicroseconds), InvalidArgument) << text;
  EXPECT_THROW(parseStraggler("1:1..5", BareNumber::DelayMicroseconds), InvalidArgument);
}

}  // namespace
}  // namespace cclab
