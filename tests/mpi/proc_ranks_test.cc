// The process backend with K ranks per process (-g K under mpirun): global rank = process * K + k, every
// rank a shared-memory peer of its own. Group calls (runGroup, one thread drives the K ranks) and one
// thread per rank (run from K threads, as the host backend allows), buffers from allocate() (in the
// rank's segment) and plain ones (staged), small calls (the LL rings) and sliced ones; every result
// compared exactly with the sum of every rank's input (small integers in float); on one node and
// across emulated nodes (the K rank threads' MPI links, one thread in MPI at a time). And the
// refusals: another process's rank, ranks per node not a multiple of K, K > 1 on the all-MPI transport.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <thread>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/mpi/mpi_world.h"
#include "collectives/proc/proc_communicator.h"

namespace cclab::mpi {
namespace {

const World& world() {
  static const World w;
  return w;
}

float valueOf(int rank, std::int64_t i, unsigned seed) {  // small integers: every sum is exact in float
  return static_cast<float>(static_cast<int>((static_cast<unsigned>(rank) * 7919U + static_cast<unsigned>(i) * 31U + seed) % 17U) - 8);
}

// Each local rank's buffers: from allocate() when `shared`, else plain vectors.
struct Buffers {
  std::vector<Buffer> owned;
  std::vector<std::vector<float>> plain;
  std::vector<RankBuffers> pairs;
};

Buffers makeBuffers(Communicator& comm, std::int64_t n, bool shared, bool inPlace) {
  Buffers b;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  for (int r : comm.localRanks()) {
    float* in = nullptr;
    float* out = nullptr;
    if (shared) {
      b.owned.push_back(comm.allocate(r, bytes));
      in = static_cast<float*>(b.owned.back().data());
      b.owned.push_back(comm.allocate(r, bytes));
      out = static_cast<float*>(b.owned.back().data());
    } else {
      b.plain.reserve(2 * comm.localRanks().size());
      b.plain.emplace_back(static_cast<std::size_t>(n));
      in = b.plain.back().data();
      b.plain.emplace_back(static_cast<std::size_t>(n));
      out = b.plain.back().data();
    }
    for (std::int64_t i = 0; i < n; ++i) {
      in[i] = valueOf(r, i, 5);
      out[i] = NAN;
    }
    if (inPlace) std::copy(in, in + n, out);
    b.pairs.push_back({inPlace ? out : in, out});  // broadcast reads the root's only
  }
  return b;
}

// Mismatches of every local rank's output against the exact result.
std::int64_t wrong(Communicator& comm, const Buffers& b, std::int64_t n, plan::Collective c, int root) {
  std::int64_t bad = 0;
  const std::vector<int> local = comm.localRanks();
  for (std::size_t j = 0; j < local.size(); ++j) {
    if (c == plan::Collective::Reduce && local[j] != root) continue;
    const auto* out = static_cast<const float*>(b.pairs[j].recv);
    for (std::int64_t i = 0; i < n; ++i) {
      float want = 0;
      if (c == plan::Collective::Broadcast)
        want = valueOf(root, i, 5);
      else
        for (int q = 0; q < comm.nranks(); ++q) want += valueOf(q, i, 5);
      if (out[i] != want) ++bad;
    }
  }
  return bad;
}

TEST(ProcRanks, GroupCallsAndThreadPerRankCallsAreExact) {
  const int procs = world().size();
  for (int k : {2, 3})
    for (int nodeProcs : {0, 1, 2}) {  // processes per emulated node (0: one real node)
      if (nodeProcs > 0 && (procs % nodeProcs != 0 || procs / nodeProcs < 2)) continue;
      if (nodeProcs > 0 && k == 3) continue;  // one K across nodes keeps the test short
      auto comm = makeProcCommunicator({.ranksPerProcess = k, .ranksPerNode = nodeProcs * k});
      const int p = comm->nranks();
      ASSERT_EQ(p, procs * k);
      const std::vector<int> local = comm->localRanks();
      ASSERT_EQ(static_cast<int>(local.size()), k);
      EXPECT_EQ(local.front(), world().rank() * k);
      EXPECT_EQ(comm->rankLocations().size(), static_cast<std::size_t>(p));
      EXPECT_NE(comm->rankLocations().back().find("thread " + std::to_string(k - 1)), std::string::npos) << comm->rankLocations().back();
      struct Case {
        plan::Collective c;
        plan::Algorithm a;
      };
      std::vector<Case> cases = {Case{plan::Collective::AllReduce, plan::Algorithm::Ring},
                                 Case{plan::Collective::AllReduce, plan::Algorithm::RecursiveDoubling},
                                 Case{plan::Collective::AllReduce, plan::Algorithm::OneShot},
                                 Case{plan::Collective::AllReduce, plan::Algorithm::DoubleBinaryTree},
                                 Case{plan::Collective::Broadcast, plan::Algorithm::Auto}, Case{plan::Collective::Reduce, plan::Algorithm::Auto}};
      if (nodeProcs > 0) cases.push_back({plan::Collective::AllReduce, plan::Algorithm::Hierarchical});
      for (Case cs : cases)
        for (std::int64_t n : {7, 3001})  // 28 B on the LL rings, 12 KB sliced on the slot path
          for (int mode = 0; mode < 4; ++mode) {  // bit 0: thread per rank; bit 1: allocate()'s buffers
            const bool threads = (mode & 1) != 0, shared = (mode & 2) != 0, inPlace = n == 7;
            const int root = p - 1;  // in the last process
            Buffers b = makeBuffers(*comm, n, shared, inPlace && cs.c == plan::Collective::AllReduce);
            CollectiveOptions o;
            o.algorithm = cs.a;
            o.sliceBytes = n > 1000 ? 1024 : 0;
            o.timeout = std::chrono::seconds(20);
            const CollectiveArgs args{cs.c, n, DataType::Float32, ReduceOp::Sum, root};
            if (threads) {
              std::vector<std::jthread> ts;
              for (int j = 0; j < k; ++j)
                ts.emplace_back([&, j] { comm->run(local[static_cast<std::size_t>(j)], args, b.pairs[static_cast<std::size_t>(j)], o); });
            } else {
              comm->runGroup(args, b.pairs, o);
            }
            EXPECT_EQ(wrong(*comm, b, n, cs.c, root), 0) << plan::name(cs.c) << " " << plan::name(cs.a) << " k " << k << " n " << n
                                                         << " nodeProcs " << nodeProcs
                                                         << " threads " << threads << " shared " << shared;
            world().barrier();  // the next call reuses buffers every peer may still read
          }
    }
}

TEST(ProcRanks, Refusals) {
  auto comm = makeProcCommunicator({.ranksPerProcess = 2});
  std::vector<float> a(8), b(8);
  const int first = world().rank() * 2;
  const CollectiveArgs args{plan::Collective::AllReduce, 8, DataType::Float32, ReduceOp::Sum, 0};
  EXPECT_THROW(comm->run(first + 2, args, {a.data(), b.data()}, {}), InvalidArgument) << "another process's rank";
  EXPECT_THROW(comm->run(first - 1, args, {a.data(), b.data()}, {}), InvalidArgument) << "another process's rank";
  const RankBuffers one{a.data(), b.data()};
  EXPECT_THROW(comm->runGroup(args, std::span<const RankBuffers>(&one, 1), {}), InvalidArgument) << "one pair for two ranks";
  EXPECT_THROW(makeProcCommunicator({.ranksPerProcess = 2, .ranksPerNode = 3}), InvalidArgument);
  EXPECT_THROW(makeProcCommunicator({.ranksPerProcess = 0}), InvalidArgument);
  EXPECT_THROW(makeProcCommunicator({.ranksPerProcess = kMaxProcRanksPerProcess + 1}), InvalidArgument);
  // Every pair over MPI (CCLAB_PROC_TRANSPORT=mpi): one rank per process.
  EXPECT_THROW(makeProcCommunicator({.ranksPerProcess = 2, .overMpi = true}), InvalidArgument);
  world().barrier();
}

}  // namespace
}  // namespace cclab::mpi
