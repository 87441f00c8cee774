// Group calls of the host backend that repeat or change between calls (host_communicator.cc: a call
// equal to the last one by value reuses its checks and each rank's lowering): whatever the caller
// changes in place between calls (the count, type and op in the same CollectiveArgs, the pointers in
// the same buffer vector, the options), every rank's result is exact against the reference on random,
// non-power-of-two counts; a straggler set in place beyond the timeout ends in a one-line
// TimeoutError (no hang); a null buffer set in place is refused. Also the ArrivalLog's batched folding:
// a call one rank skipped is not counted, the calls around it are.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/core/test_data.h"
#include "collectives/host/arrival_log.h"

namespace cclab {
namespace {

using plan::Algorithm;
using plan::Collective;

// Buffers for p ranks of up to `capacity` elements of 8 bytes, refilled per call.
struct Buffers {
  Buffers(int p, std::size_t capacity)
      : in(static_cast<std::size_t>(p), std::vector<std::uint64_t>(capacity)),
        out(static_cast<std::size_t>(p), std::vector<std::uint64_t>(capacity)) {
    for (int r = 0; r < p; ++r) bufs.push_back({in[static_cast<std::size_t>(r)].data(), out[static_cast<std::size_t>(r)].data()});
  }
  std::vector<std::vector<std::uint64_t>> in, out;
  std::vector<RankBuffers> bufs;  // the same vector (and, unless a test swaps them, the same pointers) every call
};

// Fills the inputs for `args` (seed per call), runs the group call, and counts wrong outputs over all ranks.
std::size_t runAndCountWrong(Communicator& comm, const CollectiveArgs& args, const CollectiveOptions& o, Buffers& b,
                             std::uint64_t seed) {
  const int p = comm.nranks();
  const DataSpec spec{args.type, args.op, p, seed};
  const auto n = static_cast<std::size_t>(args.count);
  for (int r = 0; r < p; ++r) fillInput(spec, r, 0, n, const_cast<void*>(b.bufs[static_cast<std::size_t>(r)].send));
  comm.runGroup(args, b.bufs, o);
  std::vector<std::uint64_t> want(n);
  fillExpectedReduce(spec, 0, n, want.data());
  std::size_t wrong = 0;
  for (int r = 0; r < p; ++r) wrong += countWrong(args.type, b.bufs[static_cast<std::size_t>(r)].recv, want.data(), n);
  return wrong;
}

// p = 2 runs a worker per rank; p = 3 and 4 run in shares where there are 2 cores (a worker per rank
// with more cores).
TEST(HostGroupCalls, CallsChangedInPlaceBetweenRepeatsStayExactOnEveryRank) {
  std::mt19937_64 rng(20261203);
  constexpr std::size_t kCapacity = 1100;  // above the LL threshold in 4-byte elements (1 KiB)
  for (int p : {2, 3, 4}) {
    auto comm = makeCommunicator(Backend::Host, {p});
    Buffers b(p, kCapacity);
    Buffers other(p, kCapacity);  // a second set of pointers to swap into the same vector
    CollectiveArgs args{Collective::AllReduce, 1, DataType::Float32, ReduceOp::Sum, 0};
    CollectiveOptions o;
    std::uint64_t seed = 1;
    const DataType types[] = {DataType::Float32, DataType::Float64, DataType::Int32};
    const ReduceOp ops[] = {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Avg};
    const Algorithm algos[] = {Algorithm::Auto, Algorithm::OneShot, Algorithm::RecursiveDoubling, Algorithm::Ring};
    for (int step = 0; step < 60; ++step) {
      // Change one thing in place (or nothing: a repeat), then run the call twice.
      switch (rng() % 6) {
        case 0: args.count = static_cast<std::int64_t>(1 + rng() % 255) | 1; break;  // odd: never a power of two but 1
        case 1: args.type = types[rng() % 3]; break;
        case 2: args.op = ops[rng() % 3]; break;
        case 3: o.algorithm = algos[rng() % 4]; break;
        case 4: std::swap(b.bufs[rng() % static_cast<unsigned>(p)], other.bufs[0]); break;
        default: break;
      }
      if (args.type == DataType::Int32 && args.op == ReduceOp::Avg) args.op = ReduceOp::Sum;
      if (step % 20 == 19) args.count = static_cast<std::int64_t>(kCapacity - 3);  // the slot path, then back
      for (int repeat = 0; repeat < 2; ++repeat)
        ASSERT_EQ(runAndCountWrong(*comm, args, o, b, seed++), 0U)
            << "p=" << p << " step " << step << " count " << args.count << " " << name(args.type) << " "
            << name(args.op) << " " << plan::name(o.algorithm);
    }
  }
}

TEST(HostGroupCalls, AStragglerSetInPlaceBeyondTheTimeoutEndsInOneLineTimeoutError) {
  for (int p : {2, 3}) {
    auto comm = makeCommunicator(Backend::Host, {p});
    Buffers b(p, 64);
    const CollectiveArgs args{Collective::AllReduce, 13, DataType::Float32, ReduceOp::Sum, 0};
    CollectiveOptions o;
    o.timeout = std::chrono::milliseconds(150);
    o.algorithm = Algorithm::OneShot;
    for (int i = 0; i < 3; ++i) ASSERT_EQ(runAndCountWrong(*comm, args, o, b, 7 + static_cast<std::uint64_t>(i)), 0U);
    o.straggler.rank = p - 1;  // the same options object: the repeat must not skip the change
    o.straggler.startDelay = std::chrono::milliseconds(600);
    const auto start = std::chrono::steady_clock::now();
    try {
      comm->runGroup(args, b.bufs, o);
      ADD_FAILURE() << "p=" << p << ": a straggler 4x the timeout did not time out";
    } catch (const TimeoutError& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
      EXPECT_NE(m.find("rank " + std::to_string(p - 1)), std::string::npos) << m;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << "no hang";
    EXPECT_THROW(comm->runGroup(args, b.bufs, o), Error) << "a later call must refuse, not hang";
  }
}

TEST(HostGroupCalls, ANullBufferSetInPlaceIsRefusedAndTheNextGoodCallIsExact) {
  auto comm = makeCommunicator(Backend::Host, {2});
  Buffers b(2, 64);
  const CollectiveArgs args{Collective::AllReduce, 21, DataType::Float32, ReduceOp::Sum, 0};
  const CollectiveOptions o;
  ASSERT_EQ(runAndCountWrong(*comm, args, o, b, 1), 0U);
  const RankBuffers saved = b.bufs[1];
  b.bufs[1].recv = nullptr;
  try {
    comm->runGroup(args, b.bufs, o);
    ADD_FAILURE() << "a null output was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
  b.bufs[1] = saved;
  EXPECT_EQ(runAndCountWrong(*comm, args, o, b, 2), 0U);
}

TEST(HostGroupCalls, ArrivalLogCountsNoCallARankSkippedAndEveryCallAroundIt) {
  host::ArrivalLog log(2);
  const auto t0 = host::Clock::now();
  const auto at = [t0](int us) { return t0 + std::chrono::microseconds(us); };
  // 3 windows of calls; rank 1 skips call 40 (its cell then holds call 40 - window or nothing).
  const std::uint32_t calls = 3 * log.window();
  for (std::uint32_t c = 1; c <= calls; ++c) {
    log.record(0, c, at(static_cast<int>(10 * c)));
    if (c != 40) log.record(1, c, at(static_cast<int>(10 * c + (c % 2 ? 3 : 0))));  // rank 1: 3 us late in odd calls
  }
  const ArrivalStats s = log.stats();
  EXPECT_FALSE(s.incomplete);
  EXPECT_EQ(s.calls, calls - 1);
  const std::int64_t odd = (calls + 1) / 2;  // call 40 is even
  EXPECT_EQ(s.ranks[1].lastCount, odd);
  EXPECT_EQ(s.ranks[0].lastCount, static_cast<std::int64_t>(calls - 1) - odd);
  EXPECT_EQ(s.ranks[1].totalLateness, std::chrono::microseconds(3 * odd));
  EXPECT_EQ(s.ranks[0].totalLateness, std::chrono::nanoseconds(0));
}

}  // namespace
}  // namespace cclab
