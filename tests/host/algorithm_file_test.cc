// Algorithms from files (collectives/plan/algorithm_file.h) on the host backend: the public MSCCL and
// MSCCL++ algorithms of tests/plan/algorithms run bit-exactly at their rank counts, in place and out
// of place, on random non-power-of-two counts, on 1 and 2 channels, with slices smaller than a chunk.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>

#include "collectives/communicator.h"
#include "collectives/core/test_data.h"
#include "collectives/plan/algorithm_file.h"
#include "tests/plan/algorithms/public_algorithms.h"

namespace cclab {
namespace {

using plan::Collective;

// Wrong elements over all ranks after one group call of `a` (root 0) on exact random data.
std::size_t wrongAfter(Communicator& comm, Collective c, plan::Algorithm a, int p, std::int64_t n, bool inPlace, int channels,
                       std::uint64_t seed) {
  const DataType t = DataType::Float32;
  const std::size_t w = sizeOf(t);
  const plan::BufferCounts counts = plan::bufferCounts(c, p, n);
  const DataSpec spec{t, ReduceOp::Sum, p, seed};
  const std::size_t big = static_cast<std::size_t>(std::max(counts.input, counts.output)) * w;
  std::vector<std::vector<unsigned char>> in(p), out(p);
  std::vector<RankBuffers> bufs(p);
  for (int r = 0; r < p; ++r) {
    out[r].assign(big + 1, 0xCD);
    if (inPlace) {
      const auto inOff = static_cast<std::size_t>(plan::inPlaceInputOffset(c, r, n)) * w;
      const auto outOff = static_cast<std::size_t>(plan::inPlaceOutputOffset(c, r, n)) * w;
      fillInput(spec, r, 0, static_cast<std::size_t>(counts.input), out[r].data() + inOff);
      bufs[r] = {out[r].data() + inOff, out[r].data() + outOff};
    } else {
      in[r].resize(static_cast<std::size_t>(counts.input) * w + 1);
      fillInput(spec, r, 0, static_cast<std::size_t>(counts.input), in[r].data());
      bufs[r] = {in[r].data(), out[r].data()};
    }
  }
  CollectiveOptions o;
  o.algorithm = a;
  o.sliceBytes = 4 * 37;  // a slice smaller than most chunks
  o.channels = channels;
  o.timeout = std::chrono::seconds(20);
  comm.runGroup({c, n, t, ReduceOp::Sum, 0}, bufs, o);
  std::size_t wrong = 0;
  std::vector<unsigned char> want(static_cast<std::size_t>(counts.output) * w);
  const auto un = static_cast<std::size_t>(n);
  for (int r = 0; r < p; ++r) {
    if (c == Collective::AllReduce) fillExpectedReduce(spec, 0, un, want.data());
    if (c == Collective::AllGather)
      for (int q = 0; q < p; ++q) fillInput(spec, q, 0, un, want.data() + q * un * w);
    wrong += countWrong(t, bufs[r].recv, want.data(), static_cast<std::size_t>(counts.output));
  }
  return wrong;
}

TEST(HostAlgorithmFiles, PublicExamplesRunBitExactly) {
  std::mt19937_64 rng(4242);
  for (const auto& e : cclab::testing::kPublicAlgorithms) {
    const plan::Algorithm a = plan::parseAlgorithm("file:" + cclab::testing::publicAlgorithmPath(e.file));
    auto comm = makeCommunicator(Backend::Host, {e.nranks});
    for (int i = 0; i < 2; ++i) {
      const std::int64_t n = 3 + static_cast<std::int64_t>(rng() % 20000) * 2;  // odd: not a power of two
      for (int channels : {1, 2})
        for (bool inPlace : {false, true})
          EXPECT_EQ(wrongAfter(*comm, e.collective, a, e.nranks, n, inPlace, channels, 7 + n), 0U)
              << e.file << " n=" << n << " channels=" << channels << " inPlace=" << inPlace;
    }
  }
}

}  // namespace
}  // namespace cclab
