// Phase deps (plan.h, Plan::deps) on the host backend. Hand-made plans whose result is right only
// when the executor honours a dep: a lane that would run ahead of the lane it depends on (the rank
// it waits for arrives 100 ms late, so the wrong order is not a matter of luck), and a lane that
// overwrites what another lane sent before the receiver read it. Then the hierarchical allreduce, two
// lanes linked by deps and pipelined over B >= 2 blocks, on 8 ranks in emulated nodes of 2 and 4:
// every op against the exact reference (core/test_data.h), sliced and not, 1 and 2 channels, large
// calls (slot executor) and small ones (LL path: a group call, run in shares, and per-rank calls).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/core/test_data.h"
#include "collectives/host/host_executor.h"
#include "collectives/plan/interpret.h"

namespace cclab {
namespace {

using plan::Buf;
using plan::Op;
using plan::OpKind;
using plan::Range;

Range in(std::int64_t n) { return {Buf::Input, 0, n}; }
Range out(std::int64_t off, std::int64_t n) { return {Buf::Output, off, n}; }
Range scratch(std::int64_t n) { return {Buf::Scratch, 0, n}; }

Op send(int peer, Range src, int phase, int channel) { return {OpKind::Send, peer, phase, src, {}, static_cast<std::uint8_t>(channel)}; }
Op recv(int peer, Range dst, int phase, int channel) { return {OpKind::Recv, peer, phase, {}, dst, static_cast<std::uint8_t>(channel)}; }
Op copy(Range src, Range dst, int phase, int channel) { return {OpKind::Copy, -1, phase, src, dst, static_cast<std::uint8_t>(channel)}; }

plan::Plan emptyPlan(int nranks, std::int64_t n, int channels) {
  plan::Plan p;
  p.nranks = nranks;
  p.count = n;
  p.nphases = 2;
  p.nchannels = channels;
  p.ranks.resize(static_cast<std::size_t>(nranks));
  return p;
}

// Rank 1's channel 1 copies (phase 1) what its channel 0 received from rank 0 (phase 0); the dep says
// so. Rank 1's channel 2 receives too, independently, so rank 1 has two lanes blocked on words and
// one gated while rank 0 is late.
plan::Plan gatedCopyPlan(std::int64_t n) {
  plan::Plan p = emptyPlan(2, n, 3);
  p.scratchCount = n;
  p.ranks[0] = {send(1, in(n), 0, 0), send(1, in(n), 0, 2)};
  p.ranks[1] = {recv(0, scratch(n), 0, 0), copy(scratch(n), out(0, n), 1, 1), recv(0, out(n, n), 0, 2)};
  p.deps = {{1, 1, 0, 0}};
  return p;
}

// Rank 0's channel 0 sends out[0, n) to rank 1 (phase 0); its channel 1 then receives rank 2's data
// into the same elements (phase 1, after channel 0 by the dep). Rank 1 is late: rank 0 must not
// overwrite the slice before rank 1 read it, though channel 0 has finished its ops.
plan::Plan overwriteAfterSendPlan(std::int64_t n) {
  plan::Plan p = emptyPlan(3, n, 2);
  p.ranks[0] = {copy(in(n), out(0, n), 0, 0), send(1, out(0, n), 0, 0), recv(2, out(0, n), 1, 1)};
  p.ranks[1] = {recv(0, out(0, n), 0, 0)};
  p.ranks[2] = {send(0, in(n), 1, 1)};
  p.deps = {{1, 1, 0, 0}};
  return p;
}

struct Buffers {
  std::vector<std::vector<float>> in, out, scratch;
};

Buffers makeBuffers(int nranks, std::int64_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0F, 1.0F);
  Buffers b;
  for (int r = 0; r < nranks; ++r) {
    b.in.emplace_back(static_cast<std::size_t>(n));
    for (float& x : b.in.back()) x = dist(rng);
    b.out.emplace_back(static_cast<std::size_t>(2 * n), -7.0F);
    b.scratch.emplace_back(static_cast<std::size_t>(n), -9.0F);
  }
  return b;
}

// Runs `plan` on a HostExecutor, one thread per rank, rank `late` arriving 100 ms after the others.
Buffers runOnHost(const plan::Plan& plan, int late, std::int64_t sliceElems) {
  Buffers b = makeBuffers(plan.nranks, plan.count, 5);
  host::HostExecutor ex(plan.nranks);
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<std::size_t>(plan.nranks));
  for (int r = 0; r < plan.nranks; ++r)
    threads.emplace_back([&, r] {
      host::RunOptions o;
      o.sliceElems = sliceElems;
      o.timeout = std::chrono::seconds(10);
      if (r == late) o.startDelay = std::chrono::milliseconds(100);
      const host::RankMemory mem{reinterpret_cast<const std::byte*>(b.in[r].data()), reinterpret_cast<std::byte*>(b.out[r].data()),
                                 reinterpret_cast<std::byte*>(b.scratch[r].data())};
      try {
        ex.run(r, plan, mem, o);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < plan.nranks; ++r) EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
  return b;
}

// The reference semantics (interpret.h, channels interleaved with their gates) on the same inputs.
Buffers interpretPlan(const plan::Plan& plan, std::int64_t sliceElems) {
  Buffers b = makeBuffers(plan.nranks, plan.count, 5);
  std::vector<plan::RankBuffers<float>> bufs;
  for (int r = 0; r < plan.nranks; ++r) bufs.push_back({b.in[r].data(), b.out[r].data(), b.scratch[r].data()});
  plan::interpret<float>(plan, bufs, [](float a, float x) { return a + x; }, {sliceElems, 0, true});
  return b;
}

TEST(HostPhaseDeps, AGatedLaneWaitsForTheLaneItDependsOn) {
  for (std::int64_t n : {1, 37, 1001})
    for (std::int64_t slice : {0, 16}) {
      const plan::Plan p = gatedCopyPlan(n);
      const Buffers got = runOnHost(p, 0, slice);
      const Buffers want = interpretPlan(p, slice);
      const auto bytes = static_cast<std::size_t>(n) * sizeof(float);
      // Rank 1's out: rank 0's input twice (channel 1's copy of channel 0's data, then channel 2's).
      EXPECT_EQ(std::memcmp(got.out[1].data(), got.in[0].data(), bytes), 0) << "n " << n << " slice " << slice;
      EXPECT_EQ(std::memcmp(got.out[1].data() + n, got.in[0].data(), bytes), 0) << "n " << n << " slice " << slice;
      EXPECT_EQ(got.out[1], want.out[1]) << "n " << n << " slice " << slice;
    }
}

TEST(HostPhaseDeps, ALaneWaitsForAnotherLanesSendToBeReadBeforeOverwritingIt) {
  for (std::int64_t n : {1, 37, 1001})
    for (std::int64_t slice : {0, 16}) {
      const plan::Plan p = overwriteAfterSendPlan(n);
      const Buffers got = runOnHost(p, 1, slice);
      const Buffers want = interpretPlan(p, slice);
      const auto bytes = static_cast<std::size_t>(n) * sizeof(float);
      EXPECT_EQ(std::memcmp(got.out[1].data(), got.in[0].data(), bytes), 0) << "rank 1 read rank 2's data: n " << n;
      EXPECT_EQ(std::memcmp(got.out[0].data(), got.in[2].data(), bytes), 0) << "n " << n << " slice " << slice;
      EXPECT_EQ(got.out[0], want.out[0]);
      EXPECT_EQ(got.out[1], want.out[1]);
    }
}

TEST(HostPhaseDeps, ATimeoutInAGatedPlanStillNamesTheRankThatNeverCame) {
  const plan::Plan p = gatedCopyPlan(100);
  host::HostExecutor ex(2);
  std::vector<float> in(100), out(200), scr(100);
  const host::RankMemory mem{reinterpret_cast<const std::byte*>(in.data()), reinterpret_cast<std::byte*>(out.data()),
                             reinterpret_cast<std::byte*>(scr.data())};
  host::RunOptions o;
  o.timeout = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  try {
    ex.run(1, p, mem, o);  // rank 0 never runs
    ADD_FAILURE() << "no timeout";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 never arrived"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// Every rank's output against the exact reduction of every rank's input (test_data.h).
void checkHier(Communicator& comm, std::int64_t count, DataType type, ReduceOp op, int rpn, int channels,
               std::size_t sliceBytes, bool perRankCalls) {
  const int p = comm.nranks();
  const std::size_t esize = sizeOf(type), bytes = static_cast<std::size_t>(count) * esize;
  const DataSpec spec{type, op, p, static_cast<std::uint64_t>(count * 131 + rpn * 7 + channels)};
  std::vector<std::vector<std::byte>> in(p, std::vector<std::byte>(bytes)), out(p, std::vector<std::byte>(bytes + esize, std::byte{0x5a}));
  std::vector<RankBuffers> bufs(p);
  for (int r = 0; r < p; ++r) {
    fillInput(spec, r, 0, static_cast<std::size_t>(count), in[r].data());
    bufs[r] = {in[r].data(), out[r].data()};
  }
  CollectiveOptions o;
  o.algorithm = plan::Algorithm::Hierarchical;
  o.channels = channels;
  o.ranksPerNode = rpn;
  o.sliceBytes = sliceBytes;
  o.timeout = std::chrono::seconds(20);
  const CollectiveArgs args{plan::Collective::AllReduce, count, type, op, 0};
  if (perRankCalls) {
    std::vector<std::thread> threads;
    for (int r = 0; r < p; ++r) threads.emplace_back([&, r] { comm.run(r, args, bufs[r], o); });
    for (auto& t : threads) t.join();
  } else {
    comm.runGroup(args, bufs, o);
  }
  std::vector<std::byte> want(bytes);
  fillExpectedReduce(spec, 0, static_cast<std::size_t>(count), want.data());
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(countWrong(type, out[r].data(), want.data(), static_cast<std::size_t>(count)), 0U)
        << "hier count " << count << " type " << name(type) << " op " << name(op) << " rpn " << rpn << " channels " << channels
        << " slice " << sliceBytes << (perRankCalls ? " per-rank calls" : "") << ": rank " << r;
    EXPECT_EQ(out[r][bytes], std::byte{0x5a}) << "rank " << r << " wrote past the end";
  }
}

TEST(HostPhaseDeps, HierarchicalPipelinedOverBlocksEveryOpOnEmulatedNodes) {
  // Every op on 2 nodes of 2 ranks, and 4 nodes of 2 and 2 nodes of 4 on 8 ranks with fewer calls (the
  // communicator takes hierarchicalBlocks' choice, which wants 16384 elements per network piece, so
  // B >= 2 needs 2 g N 16384 elements per channel's part: the data, not the ranks, sets the cost, and
  // this test runs under the sanitizers too).
  for (const int ranks : {4, 8}) {
    auto comm = makeCommunicator(Backend::Host, {ranks});
    for (int rpn : {2, 4}) {
      if (rpn == ranks) continue;
      const std::int64_t count = 2 * 2 * std::int64_t{ranks} * 16384 + 21;
      // The plan really has deps and at least 2 blocks on each channel's part.
      for (int c : {1, 2}) {
        const plan::Plan pl = plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Hierarchical, ranks, count, 0, {c, rpn});
        ASSERT_FALSE(pl.deps.empty());
        ASSERT_GE(pl.nphases, 2 + 2) << count;
      }
      if (ranks == 4) {
        for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg})
          checkHier(*comm, count, DataType::Float32, op, rpn, 1, 0, false);
        checkHier(*comm, count, DataType::Float64, ReduceOp::Sum, rpn, 1, 1000, false);
      }
      checkHier(*comm, count, DataType::Float32, ReduceOp::Sum, rpn, 2, 4000, false);
      checkHier(*comm, count, DataType::Int32, ReduceOp::Max, rpn, 2, 0, true);
      if (HasFailure()) return;
    }
  }
}

TEST(HostPhaseDeps, SmallHierarchicalCallsOnTheLlPath) {
  // Up to 1 KiB: the LL path, which runs ops whole in sequentialOps order (phase by phase).
  constexpr int kRanks = 8;
  auto comm = makeCommunicator(Backend::Host, {kRanks});
  for (int rpn : {2, 4})
    for (std::int64_t count : {1, 37, 255})
      for (bool perRank : {false, true}) {
        checkHier(*comm, count, DataType::Float32, ReduceOp::Sum, rpn, 1, 0, perRank);
        checkHier(*comm, count, DataType::Int32, ReduceOp::Min, rpn, 2, 0, perRank);
      }
}

}  // namespace
}  // namespace cclab
