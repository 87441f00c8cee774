// In-place detection and alias-aware overlap.
#include <gtest/gtest.h>

#include <vector>

#include "collectives/core/errors.h"
#include "collectives/cuda/buffer_alias.h"

namespace cclab::cuda {
namespace {

using plan::Buf;
using plan::Collective;
using Kind = BufferAlias::Kind;

TEST(BufferAlias, DisjointBuffersDoNotAlias) {
  std::vector<float> a(10), b(10);
  EXPECT_EQ(detectAlias(Collective::AllReduce, 0, 10, 4, a.data(), b.data(), 10, 10).kind, Kind::None);
  EXPECT_EQ(detectAlias(Collective::AllReduce, 0, 10, 4, nullptr, b.data(), 10, 10).kind, Kind::None);
}

TEST(BufferAlias, NcclInPlaceLayouts) {
  std::vector<float> buf(4 * 10);
  EXPECT_EQ(detectAlias(Collective::AllReduce, 2, 10, 4, buf.data(), buf.data(), 10, 10),
            (BufferAlias{Kind::InputInOutput, 0}));
  // allGather: send == recv + rank*count
  EXPECT_EQ(detectAlias(Collective::AllGather, 2, 10, 4, buf.data() + 20, buf.data(), 10, 40),
            (BufferAlias{Kind::InputInOutput, 20}));
  // reduceScatter: recv == send + rank*count
  EXPECT_EQ(detectAlias(Collective::ReduceScatter, 3, 10, 4, buf.data(), buf.data() + 30, 40, 10),
            (BufferAlias{Kind::OutputInInput, 30}));
}

TEST(BufferAlias, OtherOverlapsAreRejected) {
  std::vector<float> buf(40);
  EXPECT_THROW(detectAlias(Collective::AllReduce, 0, 10, 4, buf.data() + 3, buf.data(), 10, 10), InvalidArgument);
  EXPECT_THROW(detectAlias(Collective::AllGather, 1, 10, 4, buf.data(), buf.data(), 10, 40), InvalidArgument);
}

TEST(BufferAlias, LocateAndOverlapFollowTheAlias) {
  const BufferAlias ag{Kind::InputInOutput, 20};
  EXPECT_EQ(locate(Buf::Input, 5, ag), (Location{1, 25}));
  EXPECT_EQ(locate(Buf::Output, 5, ag), (Location{1, 5}));
  EXPECT_EQ(locate(Buf::Scratch, 5, ag), (Location{2, 5}));
  EXPECT_TRUE(overlaps({Buf::Input, 0, 10}, {Buf::Output, 25, 3}, ag));
  EXPECT_FALSE(overlaps({Buf::Input, 0, 10}, {Buf::Output, 0, 20}, ag));
  EXPECT_FALSE(overlaps({Buf::Input, 0, 10}, {Buf::Output, 0, 10}, {}));
  EXPECT_TRUE(overlaps({Buf::Input, 0, 10}, {Buf::Output, 9, 1}, {Kind::InputInOutput, 0}));
  EXPECT_FALSE(overlaps({Buf::Input, 0, 0}, {Buf::Input, 0, 10}, {}));
}

}  // namespace
}  // namespace cclab::cuda
