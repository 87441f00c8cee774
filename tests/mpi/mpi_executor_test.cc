// The plan executor over MPI, run by every rank of an mpirun job (2 and 4 processes in ctest): every
// allreduce algorithm x channels x emulated node sizes x awkward counts against a double-precision
// reference of all ranks' inputs (each rank regenerates every rank's input from the seed), ReduceAll's
// bits equal on every rank, the other collectives, in place, a straggler's timeout naming the rank,
// and (Killed.*, its own ctest) a rank that dies mid-collective.
#include <gtest/gtest.h>

#include <signal.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/core/test_data.h"
#include "collectives/mpi/mpi_executor.h"
#include "collectives/mpi/mpi_links.h"
#include "collectives/plan/slice_walk.h"
#include "collectives/proc/shm_executor.h"

namespace cclab::mpi {
namespace {

const World& world() {
  static const World w;
  return w;
}

std::vector<float> inputOf(int rank, std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed * 7919U + static_cast<unsigned>(rank));
  std::uniform_real_distribution<float> dist(-100.0F, 100.0F);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

struct Result {
  std::vector<float> out;
};

// Runs allreduce (sum, float) with `a` and `shape` on count n; checks against the double reference.
void checkAllReduce(plan::Algorithm a, plan::PlanShape shape, std::int64_t n, bool inPlace, std::int64_t slice) {
  const int p = world().size(), r = world().rank();
  const unsigned seed = static_cast<unsigned>(n * 31 + shape.channels * 7 + shape.ranksPerNode + static_cast<int>(a));
  const plan::Plan pl = plan::makePlan(plan::Collective::AllReduce, a, p, n, 0, shape);
  std::vector<float> in = inputOf(r, n, seed), out(static_cast<std::size_t>(n), NAN);
  std::vector<float> scratch(static_cast<std::size_t>(pl.scratchCount));
  if (inPlace) out = in;
  MpiRunOptions o;
  o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
  o.sliceElems = slice;
  o.timeout = std::chrono::seconds(20);
  MpiExecutor(world()).run(pl, {reinterpret_cast<const std::byte*>(inPlace ? out.data() : in.data()),
                                reinterpret_cast<std::byte*>(out.data()), reinterpret_cast<std::byte*>(scratch.data())},
                           o);
  std::vector<double> want(static_cast<std::size_t>(n), 0.0);
  for (int q = 0; q < p; ++q) {
    const auto v = inputOf(q, n, seed);
    for (std::int64_t i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] += v[static_cast<std::size_t>(i)];
  }
  for (std::int64_t i = 0; i < n; ++i)
    ASSERT_NEAR(out[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)], 1e-3 * p * 100)
        << plan::name(a) << " channels " << shape.channels << " ranksPerNode " << shape.ranksPerNode << " n " << n
        << " element " << i << " rank " << r;
  if (a == plan::Algorithm::OneShot || a == plan::Algorithm::TwoShot) {  // same bits everywhere
    std::vector<float> first = out;
    check(MPI_Bcast(first.data(), static_cast<int>(n), MPI_FLOAT, 0, world().comm()), "MPI_Bcast");
    ASSERT_EQ(std::memcmp(first.data(), out.data(), out.size() * sizeof(float)), 0) << plan::name(a) << " rank " << r;
  }
}

TEST(MpiExecutor, EveryAllReduceAlgorithmChannelsAndNodes) {
  const int p = world().size();
  for (plan::Algorithm a : {plan::Algorithm::Ring, plan::Algorithm::Tree, plan::Algorithm::DoubleBinaryTree,
                            plan::Algorithm::HalvingDoubling, plan::Algorithm::RecursiveDoubling,
                            plan::Algorithm::Hierarchical, plan::Algorithm::OneShot, plan::Algorithm::TwoShot})
    for (int channels : {1, 2, 4})
      for (int g : {0, 2})
        for (std::int64_t n : {1, 7, 61, 1000}) {
          if (g > 0 && p % g != 0) continue;
          checkAllReduce(a, {channels, g}, n, false, 0);
          checkAllReduce(a, {channels, g}, n, true, 16);
          if (HasFailure()) return;
        }
}

// hier with emulated nodes of 2 (4 processes and more): two lanes per part linked by phase deps,
// pipelined over B >= 2 blocks, large enough that the lanes overlap; every op (the executor's raw
// reduction: avg is the communicator's division, elsewhere) against the exact reference.
TEST(MpiExecutor, HierarchicalPipelinedOverBlocksEveryOp) {
  const int p = world().size(), r = world().rank();
  if (p < 4 || p % 2 != 0) GTEST_SKIP() << "needs at least 2 emulated nodes of 2 ranks";
  for (std::int64_t n : {std::int64_t{40009}, std::int64_t{3 * 16384 + 5}})
    for (int channels : {1, 2})
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max}) {
        const plan::Plan pl = plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Hierarchical, p, n, 0, {channels, 2, 3});
        ASSERT_FALSE(pl.deps.empty());
        ASSERT_EQ(pl.nphases, 3 + 2);  // B = 3 blocks (PlanShape::blocks)
        const DataSpec spec{DataType::Float32, op, p, static_cast<std::uint64_t>(n + channels)};
        std::vector<float> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n), NAN), want(in.size());
        fillInput(spec, r, 0, in.size(), in.data());
        MpiRunOptions o;
        o.reduce = hostReduceFn(DataType::Float32, op);
        o.sliceElems = op == ReduceOp::Sum ? 0 : 1000;
        o.timeout = std::chrono::seconds(20);
        MpiExecutor(world()).run(pl, {reinterpret_cast<const std::byte*>(in.data()), reinterpret_cast<std::byte*>(out.data()), nullptr}, o);
        fillExpectedReduce(spec, 0, want.size(), want.data());
        ASSERT_EQ(countWrong(DataType::Float32, out.data(), want.data(), out.size()), 0U)
            << "n " << n << " channels " << channels << " op " << name(op) << " rank " << r;
      }
}

// A hand-made plan with a dep: rank 1's channel 1 copies (phase 1) what its channel 0 received from
// rank 0 (phase 0). Rank 0 comes 100 ms late, so channel 1 would copy stale data if it ran ungated.
TEST(MpiExecutor, AGatedChannelWaitsForTheChannelItDependsOn) {
  const int p = world().size(), r = world().rank();
  for (std::int64_t n : {1, 1001})
    for (std::int64_t slice : {0, 16}) {
      plan::Plan pl;
      pl.nranks = p;
      pl.count = n;
      pl.nphases = 2;
      pl.nchannels = 2;
      pl.scratchCount = n;
      pl.ranks.resize(static_cast<std::size_t>(p));
      const plan::Range in{plan::Buf::Input, 0, n}, out{plan::Buf::Output, 0, n}, scr{plan::Buf::Scratch, 0, n};
      pl.ranks[0] = {{plan::OpKind::Send, 1, 0, in, {}, 0}};
      pl.ranks[1] = {{plan::OpKind::Recv, 0, 0, {}, scr, 0}, {plan::OpKind::Copy, -1, 1, scr, out, 1}};
      pl.deps = {{1, 1, 0, 0}};
      const std::vector<float> input = inputOf(r, n, 3);
      std::vector<float> output(static_cast<std::size_t>(n), -7.0F), scratch(static_cast<std::size_t>(n), -9.0F);
      MpiRunOptions o;
      o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);  // unused: the plan reduces nothing
      o.sliceElems = slice;
      o.timeout = std::chrono::seconds(20);
      if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      MpiExecutor(world()).run(pl, {reinterpret_cast<const std::byte*>(input.data()), reinterpret_cast<std::byte*>(output.data()),
                                    reinterpret_cast<std::byte*>(scratch.data())},
                               o);
      if (r == 1) {
        EXPECT_EQ(output, inputOf(0, n, 3)) << "n " << n << " slice " << slice;
      }
      world().barrier();
    }
}

TEST(MpiExecutor, LargeRingWithSlicesAndManySendsInFlight) {
  checkAllReduce(plan::Algorithm::Ring, {2, 0}, (1 << 20) + 3, false, 4096);
}

TEST(MpiExecutor, AllGatherPutsEveryRanksBlockInPlace) {
  const int p = world().size(), r = world().rank();
  const std::int64_t n = 37;
  const plan::Plan pl = plan::makePlan(plan::Collective::AllGather, plan::Algorithm::Ring, p, n, 0, {2, 0});
  std::vector<float> in = inputOf(r, n, 5), out(static_cast<std::size_t>(n * p), NAN);
  MpiRunOptions o;
  MpiExecutor(world()).run(pl, {reinterpret_cast<const std::byte*>(in.data()), reinterpret_cast<std::byte*>(out.data()), nullptr}, o);
  for (int q = 0; q < p; ++q) {
    const auto v = inputOf(q, n, 5);
    ASSERT_EQ(std::memcmp(out.data() + q * n, v.data(), static_cast<std::size_t>(n) * sizeof(float)), 0) << "block " << q;
  }
}

TEST(MpiExecutor, RefusesAPlanForAnotherJobSize) {
  const plan::Plan pl = plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Ring, world().size() + 1, 8);
  std::vector<float> buf(8);
  MpiRunOptions o;
  o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
  EXPECT_THROW(MpiExecutor(world()).run(pl, {reinterpret_cast<std::byte*>(buf.data()), reinterpret_cast<std::byte*>(buf.data()), nullptr}, o),
               InvalidArgument);
}

TEST(MpiWorld, KnowsEveryRanksPidHostAndNode) {
  const World& w = world();
  ASSERT_EQ(static_cast<int>(w.peers().size()), w.size());
  EXPECT_EQ(w.peers()[static_cast<std::size_t>(w.rank())].pid, static_cast<int>(getpid()));
  std::set<int> pids;
  for (const Peer& peer : w.peers()) {
    EXPECT_FALSE(peer.host.empty());
    pids.insert(peer.pid);
  }
  EXPECT_EQ(static_cast<int>(pids.size()), w.size());
  EXPECT_EQ(w.nodes(), 1);  // one machine, no emulation
  EXPECT_FALSE(w.jobId().empty());
}

// The hybrid: nodes of 2 ranks (emulated), each its own ShmExecutor; pairs within a node go through
// shared memory, and exactly the plan's slices to the other node go through MPI.
TEST(Hybrid, SharedMemoryWithinANodeMpiBetweenNodes) {
  const int p = world().size(), r = world().rank();
  if (p % 2 != 0 || p < 4) GTEST_SKIP() << "needs nodes of 2 ranks and at least 2 nodes";
  const World& w = world();
  proc::NodeRanks node;
  node.jobRanks = p;
  node.ranks = {r - r % 2, r - r % 2 + 1};
  std::string job = w.jobId() + "h" + std::to_string(r / 2);
  MpiLinks links(w);
  proc::ShmExecutor shm(job, r, node, 1 << 22, std::chrono::seconds(20), &links);
  for (plan::Algorithm a : {plan::Algorithm::Ring, plan::Algorithm::Hierarchical, plan::Algorithm::OneShot, plan::Algorithm::DoubleBinaryTree})
    for (std::int64_t n : {7, 1000, 40009}) {  // hier pipelines 4 blocks per channel (PlanShape::blocks)
      const plan::Plan pl = plan::makePlan(plan::Collective::AllReduce, a, p, n, 0, {2, 2, 4});
      const std::vector<float> in = inputOf(r, n, 77);
      std::byte* base = shm.buffer();
      std::memcpy(base, in.data(), in.size() * sizeof(float));
      proc::ShmRunOptions o;
      o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
      o.sliceElems = 64;
      o.timeout = std::chrono::seconds(20);
      const long long before = links.messagesSent();
      shm.run(pl, {0, 1 << 20, 2 << 20}, o);
      long long offNode = 0;  // the plan's send slices to the other node
      const auto& ops = pl.ranks[static_cast<std::size_t>(r)];
      for (plan::SliceCursor cur(ops, o.sliceElems); !cur.done(); cur.advance()) {
        const plan::Op& op = ops[cur.opIndex()];
        if (op.kind == plan::OpKind::Send && op.peer / 2 != r / 2) ++offNode;
      }
      EXPECT_EQ(links.messagesSent() - before, offNode) << plan::name(a) << " n " << n;
      std::vector<float> out(static_cast<std::size_t>(n));
      std::memcpy(out.data(), base + (1 << 20), out.size() * sizeof(float));
      std::vector<double> want(static_cast<std::size_t>(n), 0.0);
      for (int q = 0; q < p; ++q) {
        const std::vector<float> v = inputOf(q, n, 77);
        for (std::size_t i = 0; i < want.size(); ++i) want[i] += v[i];
      }
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(out[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)], 1e-3 * p * 100)
            << plan::name(a) << " n " << n << " i " << i;
      w.barrier();  // the next plan reuses the buffers every peer may still read
    }
}

// Rank 1 dies by SIGKILL while the others wait for its data: mpirun must end the job (it names the
// rank: "... rank 1 with PID ... exited on signal 9"), long before the executor's 30 s timeout.
TEST(Killed, ARankThatDiesEndsTheJob) {
  const int p = world().size(), r = world().rank();
  const plan::Plan pl = plan::makePlan(plan::Collective::AllReduce, plan::Algorithm::Ring, p, 1 << 16);
  std::vector<float> in = inputOf(r, 1 << 16, 9), out(in.size());
  world().barrier();
  if (r == 1) raise(SIGKILL);
  MpiRunOptions o;
  o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
  MpiExecutor(world()).run(pl, {reinterpret_cast<const std::byte*>(in.data()), reinterpret_cast<std::byte*>(out.data()), nullptr}, o);
  ADD_FAILURE() << "rank " << r << " finished an allreduce without rank 1";
}

}  // namespace
}  // namespace cclab::mpi
