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
#include <vector>

#include "collectives/core/errors.h"
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
    for (std::int64_t n : {7, 1000}) {
      const plan::Plan pl = plan::makePlan(plan::Collective::AllReduce, a, p, n, 0, {2, 2});
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
      for (std::int64_t i = 0; i < n; ++i) {
        double want = 0;
        for (int q = 0; q < p; ++q) want += inputOf(q, n, 77)[static_cast<std::size_t>(i)];
        ASSERT_NEAR(out[static_cast<std::size_t>(i)], want, 1e-3 * p * 100) << plan::name(a) << " n " << n << " i " << i;
      }
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
