// The multi-process CUDA backend's executor and MPI pieces under mpirun, on the CPU: the same
// GpuProcCommunicator the CUDA backend builds under mpirun, with a host stand-in device
// (collectives/gpu_proc/host_proc_device.h), so the IPC exchange over MPI, the progress words and the staging between
// (emulated) nodes are tested here; the CUDA device itself only runs on a GPU (scripts/gpu_check).
// Every result is compared exactly with the sum of every rank's input (small integers in float).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "collectives/gpu_proc/ipc_exchange.h"
#include "collectives/gpu_proc/gpu_proc_communicator.h"
#include "collectives/mpi/mpi_world.h"
#include "collectives/gpu_proc/node_exchange.h"
#include "collectives/plan/slice_walk.h"
#include "collectives/gpu_proc/host_proc_device.h"

namespace cclab::mpi {
namespace {

const World& world() {
  static const World w;
  return w;
}

std::unique_ptr<Communicator> makeComm(int ranksPerNode, int ranksPerProcess = 1) {
  static int instance = 0;  // the same on every process: communicators are made in the same order
  const std::string job = world().jobId() + "d" + std::to_string(instance++);
  GpuProcConfig c;
  c.ranksPerNode = ranksPerNode;
  c.ranksPerProcess = ranksPerProcess;
  c.makeDevice = [job](int) { return std::make_unique<HostProcDevice>(job, world().rank()); };
  return makeGpuProcCommunicator(c);
}

int emulatedNodeSize(int p) { return p >= 4 && p % 2 == 0 ? 2 : 1; }

float valueOf(int rank, std::int64_t i, unsigned seed) {  // small integers: every sum is exact in float
  return static_cast<float>(static_cast<int>((static_cast<unsigned>(rank) * 7919U + static_cast<unsigned>(i) * 31U + seed) % 17U) - 8);
}

// The plan's send slices from this rank to another node (what must be staged).
long long offNodeSendSlices(const plan::Plan& pl, int rank, std::int64_t slice, int perNode) {
  long long n = 0;
  const auto& ops = pl.ranks[static_cast<std::size_t>(rank)];
  for (plan::SliceCursor cur(ops, slice); !cur.done(); cur.advance()) {
    const plan::Op& op = ops[cur.opIndex()];
    if (op.kind == plan::OpKind::Send && op.peer / perNode != rank / perNode) ++n;
  }
  return n;
}

// One allreduce on buffers from allocate(); returns the wrong elements on this rank.
std::int64_t allReduceWrong(Communicator& comm, plan::Algorithm a, int channels, std::int64_t n, bool inPlace, std::size_t sliceBytes,
                            unsigned seed) {
  const int p = comm.nranks(), r = world().rank();
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  Buffer in = comm.allocate(r, bytes), out = comm.allocate(r, bytes);
  std::vector<float> host(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = valueOf(r, i, seed);
  comm.copyToRank(r, inPlace ? out.data() : in.data(), host.data(), bytes);
  CollectiveOptions o;
  o.algorithm = a;
  o.channels = channels;
  o.sliceBytes = sliceBytes;
  o.timeout = std::chrono::seconds(20);
  comm.allReduce(r, inPlace ? out.data() : in.data(), out.data(), n, DataType::Float32, ReduceOp::Sum, o);
  comm.copyFromRank(r, host.data(), out.data(), bytes);
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    float want = 0;
    for (int q = 0; q < p; ++q) want += valueOf(q, i, seed);
    wrong += host[static_cast<std::size_t>(i)] != want;
  }
  return wrong;
}

TEST(GpuProc, EveryAllReduceAlgorithmOnOneNodeAndAcrossEmulatedNodes) {
  const int p = world().size(), r = world().rank();
  std::vector<int> layouts = {0};
  if (p >= 2) layouts.push_back(emulatedNodeSize(p));
  for (int perNode : layouts) {
    auto comm = makeComm(perNode);
    EXPECT_EQ(comm->backend(), Backend::Cuda);
    EXPECT_EQ(comm->localRanks(), std::vector<int>{r});
    std::vector<plan::Algorithm> algos = {plan::Algorithm::Ring, plan::Algorithm::Tree, plan::Algorithm::DoubleBinaryTree,
                                          plan::Algorithm::HalvingDoubling, plan::Algorithm::RecursiveDoubling,
                                          plan::Algorithm::OneShot, plan::Algorithm::TwoShot};
    if (perNode > 0) algos.push_back(plan::Algorithm::Hierarchical);
    for (plan::Algorithm a : algos)
      for (int channels : {1, 2})
        for (std::int64_t n : {1, 7, 1000, 20011})
          for (bool inPlace : {false, true}) {
            const std::size_t slice = n > 1000 ? 1024 : 0;
            EXPECT_EQ(allReduceWrong(*comm, a, channels, n, inPlace, slice, static_cast<unsigned>(n)), 0)
                << plan::name(a) << " nodes of " << perNode << " channels " << channels << " n " << n << (inPlace ? " in place" : "");
          }
  }
}

// Across emulated nodes (of 2 ranks, or of 1 when that does not divide) exactly the plan's send slices to the other node are staged (the
// rest moves through the IPC mappings); on one node nothing is.
TEST(GpuProc, StagesExactlyThePlansSlicesToOtherNodes) {
  const int p = world().size(), r = world().rank();
  if (p < 2) GTEST_SKIP() << "needs 2 nodes";
  for (int perNode : {0, emulatedNodeSize(p)}) {
    auto comm = makeComm(perNode);
    for (plan::Algorithm a : {plan::Algorithm::DoubleBinaryTree, plan::Algorithm::Ring, plan::Algorithm::Hierarchical}) {
      if (a == plan::Algorithm::Hierarchical && perNode == 0) continue;
      const std::int64_t n = 4099;
      const std::size_t sliceBytes = 256;  // 64 floats
      const long long before = stagedMessagesSent(*comm);
      EXPECT_EQ(allReduceWrong(*comm, a, 1, n, false, sliceBytes, 3), 0);
      const plan::Plan pl = plan::makePlan(plan::Collective::AllReduce, a, p, n, 0, {1, perNode});
      const long long want = perNode == 0 ? 0 : offNodeSendSlices(pl, r, 64, perNode);
      EXPECT_EQ(stagedMessagesSent(*comm) - before, want) << plan::name(a) << " nodes of " << perNode;
    }
  }
}

TEST(GpuProc, OtherCollectivesAndAvg) {
  const int p = world().size(), r = world().rank();
  auto comm = makeComm(p >= 2 ? emulatedNodeSize(p) : 0);
  const std::int64_t n = 37;
  const std::size_t b = sizeof(float);
  CollectiveOptions o;
  o.timeout = std::chrono::seconds(20);
  // allgather: rank q's block of n at q * n
  Buffer in = comm->allocate(r, n * b), out = comm->allocate(r, static_cast<std::size_t>(p) * n * b);
  std::vector<float> mine(n), all(static_cast<std::size_t>(p * n));
  for (std::int64_t i = 0; i < n; ++i) mine[static_cast<std::size_t>(i)] = valueOf(r, i, 5);
  comm->copyToRank(r, in.data(), mine.data(), n * b);
  comm->allGather(r, in.data(), out.data(), n, DataType::Float32, o);
  comm->copyFromRank(r, all.data(), out.data(), all.size() * b);
  for (int q = 0; q < p; ++q)
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(all[static_cast<std::size_t>(q * n + i)], valueOf(q, i, 5)) << "allgather";
  // broadcast from the last rank
  comm->broadcast(r, in.data(), in.data(), n, DataType::Float32, p - 1, o);
  comm->copyFromRank(r, mine.data(), in.data(), n * b);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(mine[static_cast<std::size_t>(i)], valueOf(p - 1, i, 5)) << "broadcast";
  // avg allreduce of 2 * rank: (p - 1)
  std::vector<float> twice(n, static_cast<float>(2 * r));
  comm->copyToRank(r, in.data(), twice.data(), n * b);
  comm->allReduce(r, in.data(), in.data(), n, DataType::Float32, ReduceOp::Avg, o);
  comm->copyFromRank(r, twice.data(), in.data(), n * b);
  for (float v : twice) ASSERT_EQ(v, static_cast<float>(p - 1)) << "avg";
}

TEST(GpuProc, RefusesMemoryNotFromAllocate) {
  auto comm = makeComm(0);
  std::vector<float> a(8), b(8);
  const int r = world().rank();
  EXPECT_THROW(comm->allReduce(r, a.data(), b.data(), 8, DataType::Float32, ReduceOp::Sum), InvalidArgument);
  EXPECT_THROW(comm->allReduce(r + 1, a.data(), b.data(), 8, DataType::Float32, ReduceOp::Sum), InvalidArgument) << "another process's rank";
  world().barrier();
}

// K virtual ranks per process (one group call drives them): every rank's result exact, on one node
// and with every process its own emulated node.
TEST(GpuProc, VirtualRanksPerProcess) {
  const int procs = world().size();
  for (int k : {2, 3})
    for (int perNode : {0, k}) {
      if (perNode > 0 && procs < 2) continue;
      auto comm = makeComm(perNode, k);
      const int p = comm->nranks();
      ASSERT_EQ(p, procs * k);
      const std::vector<int> local = comm->localRanks();
      ASSERT_EQ(static_cast<int>(local.size()), k);
      EXPECT_EQ(local.front(), world().rank() * k);
      std::vector<plan::Algorithm> algos = {plan::Algorithm::Ring, plan::Algorithm::DoubleBinaryTree, plan::Algorithm::OneShot,
                                            plan::Algorithm::HalvingDoubling};
      if (perNode > 0) algos.push_back(plan::Algorithm::Hierarchical);
      for (plan::Algorithm a : algos)
        for (std::int64_t n : {7, 3001})
          for (bool inPlace : {false, true}) {
            const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
            std::vector<Buffer> in, out;
            std::vector<RankBuffers> bufs;
            for (int r : local) {
              in.push_back(comm->allocate(r, bytes));
              out.push_back(comm->allocate(r, bytes));
              std::vector<float> host(static_cast<std::size_t>(n));
              for (std::int64_t i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = valueOf(r, i, 11);
              comm->copyToRank(r, inPlace ? out.back().data() : in.back().data(), host.data(), bytes);
              bufs.push_back({inPlace ? out.back().data() : in.back().data(), out.back().data()});
            }
            CollectiveOptions o;
            o.algorithm = a;
            o.channels = 2;
            o.sliceBytes = n > 1000 ? 1024 : 0;
            o.timeout = std::chrono::seconds(20);
            comm->runGroup({plan::Collective::AllReduce, n, DataType::Float32, ReduceOp::Sum, 0}, bufs, o);
            std::int64_t wrong = 0;
            for (std::size_t j = 0; j < local.size(); ++j) {
              std::vector<float> host(static_cast<std::size_t>(n));
              comm->copyFromRank(local[j], host.data(), out[j].data(), bytes);
              for (std::int64_t i = 0; i < n; ++i) {
                float want = 0;
                for (int q = 0; q < p; ++q) want += valueOf(q, i, 11);
                wrong += host[static_cast<std::size_t>(i)] != want;
              }
            }
            EXPECT_EQ(wrong, 0) << plan::name(a) << " K " << k << " nodes of " << perNode << " n " << n << (inPlace ? " in place" : "");
          }
      std::vector<float> x(4), y(4);
      EXPECT_THROW(comm->allReduce(local[0], x.data(), y.data(), 4, DataType::Float32, ReduceOp::Sum), InvalidArgument)
          << "per-rank calls need one rank per process";
      world().barrier();
    }
}

TEST(GpuProc, RanksPerProcessOutOfRangeOrNotDividingTheNodeAreRefused) {
  GpuProcConfig c;
  c.makeDevice = [](int) { return std::unique_ptr<cuda::ProcDevice>(); };
  c.ranksPerProcess = 17;
  EXPECT_THROW((void)makeGpuProcCommunicator(c), InvalidArgument);
  c.ranksPerProcess = 2;
  c.ranksPerNode = 3;
  EXPECT_THROW((void)makeGpuProcCommunicator(c), InvalidArgument);
}

// The IPC records all-gathered over the node's MPI communicator: every process of the node sees
// every other one's handles, and none from another (emulated) node.
TEST(CudaIpcExchange, MpiTransportGathersTheNodesRecords) {
  const int p = world().size(), r = world().rank();
  for (int perNode : {0, p % 2 == 0 ? 2 : 1}) {
    const World w(perNode);
    const NodeComm node(w);
    MpiRecordTransport t(node);
    cuda::ProcessRecord mine;
    mine.process = r;
    mine.pid = w.peers()[static_cast<std::size_t>(r)].pid;
    mine.node = w.node(r);
    mine.sequence = 9;
    mine.deviceId = "dev" + std::to_string(r % 2);
    mine.ranks = {r};
    cuda::IpcHandle h{};
    h[0] = static_cast<std::byte>(r);
    mine.regions.push_back({r, cuda::kSlotOutput, cuda::ExportKind::Memory, h, 128, static_cast<std::uint64_t>(r) + 1});
    const cuda::NodeDirectory d = cuda::exchangeRecords(t, mine);
    std::vector<int> want;
    for (int q = 0; q < p; ++q)
      if (w.node(q) == w.node(r)) want.push_back(q);
    EXPECT_EQ(d.ranks(), want) << "nodes of " << perNode;
    for (int q : want) {
      const cuda::ExportedRegion* g = d.region(q, cuda::kSlotOutput);
      ASSERT_NE(g, nullptr);
      EXPECT_EQ(g->handle[0], static_cast<std::byte>(q));
      EXPECT_EQ(g->bytes, static_cast<std::uint64_t>(q) + 1);
      EXPECT_EQ(d.importable(q), q != r);
    }
  }
}

TEST(CudaAwareMpi, IsDetectedAndSaid) {
  const CudaAwareness a = cudaAwareMpi();
  EXPECT_FALSE(a.text.empty());
  if (!a.buildTime) {
    EXPECT_FALSE(a.runTime) << "an MPI built without CUDA is not CUDA-aware at run time";
  }
  EXPECT_NE(a.text.find(a.runTime ? "CUDA-aware at run time" : "not CUDA-aware"), std::string::npos) << a.text;
  if (world().rank() == 0) std::printf("cudaAwareMpi: %s\n", a.text.c_str());
}

}  // namespace
}  // namespace cclab::mpi
