// The CUDA backend against the exact reference (core/test_data.h): every algorithm and ordering
// (events, graph, ll), K = 1..8 virtual ranks, every type and op, odd counts, in place, slices,
// repeated calls (graph replays), per-rank calls, timeouts, the straggler. Every test skips with a
// message when no CUDA device is visible (cudaGetDeviceCount), and fails instead under
// CCLAB_EXPECT_GPU=1 (gpu_required.h).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <chrono>
#include <thread>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/core/test_data.h"
#include "tests/cuda/gpu_required.h"

namespace cclab {
namespace {

using plan::Algorithm;
using plan::Collective;


const char* const kOrders[] = {"events", "graph", "ll"};
const Algorithm kAllReduceAlgorithms[] = {Algorithm::Ring, Algorithm::Tree, Algorithm::DoubleBinaryTree,
                                          Algorithm::HalvingDoubling, Algorithm::RecursiveDoubling, Algorithm::Auto};

struct Case {
  Collective collective = Collective::AllReduce;
  Algorithm algorithm = Algorithm::Ring;
  std::int64_t count = 0;
  DataType type = DataType::Float32;
  ReduceOp op = ReduceOp::Sum;
  bool inPlace = false;
  std::size_t sliceBytes = 0;
  int repeats = 1;
  int channels = 0;      // CollectiveOptions: 0, the backend's default
  int ranksPerNode = 0;  // emulated nodes (hier)
};

std::string describe(const Case& c, int p, const std::string& order) {
  return std::string(plan::name(c.collective)) + "/" + std::string(plan::name(c.algorithm)) + " order=" + order +
         " p=" + std::to_string(p) + " n=" + std::to_string(c.count) + " " + std::string(name(c.type)) + "/" +
         std::string(name(c.op)) + (c.inPlace ? " in place" : "") + " slice=" + std::to_string(c.sliceBytes) +
         " channels=" + std::to_string(c.channels) + " ranksPerNode=" + std::to_string(c.ranksPerNode);
}

// One group call (repeated c.repeats times, inputs refilled) on device buffers; returns the number
// of wrong elements over all ranks after the last.
std::size_t wrongAfter(Communicator& comm, const Case& c, std::uint64_t seed) {
  const int p = comm.nranks();
  const int root = p - 1;
  const std::size_t w = sizeOf(c.type);
  const plan::BufferCounts counts = plan::bufferCounts(c.collective, p, c.count);
  const DataSpec spec{c.type, c.op, p, seed};
  const std::size_t big = static_cast<std::size_t>(std::max(counts.input, counts.output)) * w;
  const std::vector<unsigned char> poison(big + 16, 0xCD);
  std::vector<Buffer> in, out;
  std::vector<RankBuffers> bufs(static_cast<std::size_t>(p));
  std::vector<unsigned char> host(static_cast<std::size_t>(counts.input) * w + 1);
  for (int r = 0; r < p; ++r) {
    out.push_back(comm.allocate(r, big + 16));
    auto* o = static_cast<unsigned char*>(out.back().data());
    if (c.inPlace) {
      const auto inOff = static_cast<std::size_t>(plan::inPlaceInputOffset(c.collective, r, c.count)) * w;
      const auto outOff = static_cast<std::size_t>(plan::inPlaceOutputOffset(c.collective, r, c.count)) * w;
      bufs[r] = {o + inOff, o + outOff};
    } else {
      in.push_back(comm.allocate(r, static_cast<std::size_t>(counts.input) * w + 16));
      bufs[r] = {in.back().data(), o};
    }
  }
  CollectiveOptions opt = testing::gpuTestOptions();
  opt.algorithm = c.algorithm;
  opt.sliceBytes = c.sliceBytes;
  opt.channels = c.channels;
  opt.ranksPerNode = c.ranksPerNode;
  for (int rep = 0; rep < c.repeats; ++rep) {
    for (int r = 0; r < p; ++r) {
      comm.copyToRank(r, out[r].data(), poison.data(), big + 16);
      fillInput(spec, r, 0, static_cast<std::size_t>(counts.input), host.data());
      comm.copyToRank(r, const_cast<void*>(bufs[r].send), host.data(), static_cast<std::size_t>(counts.input) * w);
    }
    comm.runGroup({c.collective, c.count, c.type, c.op, root}, bufs, opt);
    comm.synchronize();
  }
  std::size_t wrong = 0;
  const auto n = static_cast<std::size_t>(c.count);
  std::vector<unsigned char> want(static_cast<std::size_t>(counts.output) * w), got(want.size());
  for (int r = 0; r < p; ++r) {
    if (c.collective == Collective::Reduce && r != root) continue;
    switch (c.collective) {
      case Collective::AllReduce:
      case Collective::Reduce: fillExpectedReduce(spec, 0, n, want.data()); break;
      case Collective::ReduceScatter: fillExpectedReduce(spec, r * c.count, n, want.data()); break;
      case Collective::AllGather:
        for (int q = 0; q < p; ++q) fillInput(spec, q, 0, n, want.data() + q * n * w);
        break;
      case Collective::Broadcast: fillInput(spec, root, 0, n, want.data()); break;
    }
    comm.copyFromRank(r, got.data(), bufs[r].recv, got.size());
    wrong += countWrong(c.type, got.data(), want.data(), static_cast<std::size_t>(counts.output));
  }
  return wrong;
}

std::unique_ptr<Communicator> make(int p, const std::string& order) { return makeCommunicator(Backend::Cuda, {p, parseCudaOrder(order)}); }

TEST(CudaBackend, SmallCaseForSanitizers) {  // scripts/gpu_check runs this one under compute-sanitizer
  CCLAB_REQUIRE_GPU();
  for (const char* order : kOrders) {
    auto comm = make(4, order);
    for (Algorithm a : {Algorithm::Ring, Algorithm::HalvingDoubling}) {
      Case c{Collective::AllReduce, a, 1001, DataType::Float32, ReduceOp::Sum};
      EXPECT_EQ(wrongAfter(*comm, c, 1), 0u) << describe(c, 4, order);
      c.type = DataType::Float16;
      c.op = ReduceOp::Min;
      c.inPlace = true;
      EXPECT_EQ(wrongAfter(*comm, c, 2), 0u) << describe(c, 4, order);
    }
  }
}

TEST(CudaBackend, AllReduceEveryAlgorithmOrderAndRankCount) {
  CCLAB_REQUIRE_GPU();
  for (const char* order : kOrders)
    for (int p = 1; p <= 8; ++p) {
      auto comm = make(p, order);
      for (Algorithm a : kAllReduceAlgorithms)
        for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{1001}, std::int64_t{65539}}) {
          const Case c{Collective::AllReduce, a, n};
          ASSERT_EQ(wrongAfter(*comm, c, static_cast<std::uint64_t>(p * 100 + n)), 0u) << describe(c, p, order);
        }
    }
}

// The hierarchical allreduce: a node lane and a network lane per part, linked by phase deps and
// pipelined over B blocks (B >= 2 from 2 g N 1024 elements per part); a rank's lanes run side by side
// (streams, or blocks of the ll kernel) and hand blocks to each other through the deps' waits
// (lowering.h). K = 8 with 2 or 4 ranks per node and 1, 2, 4 parts (4 parts: 64 programs, the ll
// kernel's limit), K = 6 with 3 per node; whole ops and slices, in and out of place.
TEST(CudaBackend, HierarchicalLanesLinkedByPhaseDeps) {
  CCLAB_REQUIRE_GPU();
  struct Shape {
    int p, ranksPerNode, channels;
  };
  for (const char* order : kOrders)
    for (const Shape s : {Shape{8, 2, 1}, Shape{8, 4, 2}, Shape{8, 2, 4}, Shape{6, 3, 1}}) {
      auto comm = make(s.p, order);
      for (std::int64_t n : {std::int64_t{7}, std::int64_t{40009}, std::int64_t{262147}})
        for (bool inPlace : {false, true}) {
          Case c{Collective::AllReduce, Algorithm::Hierarchical, n};
          c.inPlace = inPlace;
          c.channels = s.channels;
          c.ranksPerNode = s.ranksPerNode;
          c.sliceBytes = inPlace ? 4096 : 0;
          ASSERT_EQ(wrongAfter(*comm, c, static_cast<std::uint64_t>(s.p * 1000 + n)), 0u) << describe(c, s.p, order);
        }
    }
}

TEST(CudaBackend, EveryTypeAndOp) {
  CCLAB_REQUIRE_GPU();
  for (const char* order : kOrders)
    for (int p : {3, 8}) {
      auto comm = make(p, order);
      for (Algorithm a : {Algorithm::Ring, Algorithm::HalvingDoubling})
        for (DataType t : kAllDataTypes)
          for (ReduceOp op : kAllReduceOps) {
            const Case c{Collective::AllReduce, a, 1001, t, op};
            EXPECT_EQ(wrongAfter(*comm, c, 7), 0u) << describe(c, p, order);
          }
    }
}

TEST(CudaBackend, InPlaceAndEveryCollective) {
  CCLAB_REQUIRE_GPU();
  const std::pair<Collective, Algorithm> shapes[] = {
      {Collective::AllReduce, Algorithm::Tree},       {Collective::AllReduce, Algorithm::DoubleBinaryTree},
      {Collective::ReduceScatter, Algorithm::Ring},   {Collective::AllGather, Algorithm::Ring},
      {Collective::Broadcast, Algorithm::Chain},      {Collective::Broadcast, Algorithm::Tree},
      {Collective::Reduce, Algorithm::Chain},         {Collective::Reduce, Algorithm::Tree}};
  for (const char* order : kOrders)
    for (int p : {1, 2, 3, 5, 8}) {
      auto comm = make(p, order);
      for (const auto& [coll, algo] : shapes)
        for (bool inPlace : {false, true}) {
          const Case c{coll, algo, 333, DataType::Int32, ReduceOp::Sum, inPlace};
          EXPECT_EQ(wrongAfter(*comm, c, 3), 0u) << describe(c, p, order);
        }
    }
}

TEST(CudaBackend, SlicesSmallerThanAChunkAndRepeatedCalls) {
  CCLAB_REQUIRE_GPU();
  for (const char* order : kOrders)
    for (int p : {4, 8}) {
      auto comm = make(p, order);
      for (std::size_t slice : {std::size_t{64}, std::size_t{4096}})
        for (Algorithm a : kAllReduceAlgorithms) {
          const Case c{Collective::AllReduce, a, 10007, DataType::BFloat16, ReduceOp::Max, false, slice, 3};
          EXPECT_EQ(wrongAfter(*comm, c, 5), 0u) << describe(c, p, order);
        }
    }
}

TEST(CudaBackend, LargeMessagesUseTheVectorPathOnEveryOrder) {
  CCLAB_REQUIRE_GPU();
  for (const char* order : kOrders) {
    auto comm = make(8, order);
    for (Algorithm a : {Algorithm::Ring, Algorithm::DoubleBinaryTree}) {
      const Case c{Collective::AllReduce, a, (std::int64_t{1} << 22) + 5, DataType::Float32, ReduceOp::Avg, false, 0, 2};
      EXPECT_EQ(wrongAfter(*comm, c, 9), 0u) << describe(c, 8, order);
    }
  }
}

TEST(CudaBackend, PerRankCallsFromTheCallersThreads) {
  CCLAB_REQUIRE_GPU();
  const int p = 4;
  const std::int64_t n = 999;
  for (const char* order : kOrders) {
    auto comm = make(p, order);
    const DataSpec spec{DataType::Float32, ReduceOp::Sum, p, 21};
    std::vector<Buffer> in, out;
    std::vector<float> host(n);
    for (int r = 0; r < p; ++r) {
      in.push_back(comm->allocate(r, n * 4));
      out.push_back(comm->allocate(r, n * 4));
      fillInput(spec, r, 0, n, host.data());
      comm->copyToRank(r, in[r].data(), host.data(), n * 4);
    }
    std::vector<std::thread> threads;
    for (int r = 0; r < p; ++r)
      threads.emplace_back([&, r] { comm->allReduce(r, in[r].data(), out[r].data(), n, DataType::Float32, ReduceOp::Sum, testing::gpuTestOptions()); });
    for (auto& t : threads) t.join();
    comm->synchronize();
    std::vector<float> want(n);
    fillExpectedReduce(spec, 0, n, want.data());
    for (int r = 0; r < p; ++r) {
      comm->copyFromRank(r, host.data(), out[r].data(), n * 4);
      EXPECT_EQ(countWrong(DataType::Float32, host.data(), want.data(), n), 0u) << order << " rank " << r;
    }
  }
}

// What the trainer's device path relies on: work a rank enqueues on its rankStream before a call runs
// before the call (here: the input arrives by a device copy enqueued just before, with no host wait),
// and synchronizeRank(r) alone makes rank r's result complete, in every ordering.
TEST(CudaBackend, RankStreamOrdersCallersWorkAndEachRankSynchronizesItsOwn) {
  CCLAB_REQUIRE_GPU();
  const int p = 3;
  const std::int64_t n = 1237;
  for (const char* order : kOrders) {
    auto comm = make(p, order);
    const DataSpec spec{DataType::Float32, ReduceOp::Sum, p, 23};
    std::vector<Buffer> staged, buf;
    std::vector<float> host(n);
    for (int r = 0; r < p; ++r) {
      staged.push_back(comm->allocate(r, n * 4));
      buf.push_back(comm->allocate(r, n * 4));
      fillInput(spec, r, 0, n, host.data());
      comm->copyToRank(r, staged[r].data(), host.data(), n * 4);
      ASSERT_NE(comm->rankStream(r), nullptr);
    }
    std::vector<float> want(n);
    fillExpectedReduce(spec, 0, n, want.data());
    std::vector<std::size_t> wrong(p, 0);
    std::vector<std::thread> threads;
    for (int r = 0; r < p; ++r)
      threads.emplace_back([&, r] {
        auto* stream = static_cast<cudaStream_t>(comm->rankStream(r));
        cudaMemcpyAsync(buf[r].data(), staged[r].data(), n * 4, cudaMemcpyDeviceToDevice, stream);
        comm->allReduce(r, buf[r].data(), buf[r].data(), n, DataType::Float32, ReduceOp::Sum, testing::gpuTestOptions());
        comm->synchronizeRank(r);
        std::vector<float> got(n);
        comm->copyFromRank(r, got.data(), buf[r].data(), n * 4);
        wrong[r] = countWrong(DataType::Float32, got.data(), want.data(), n);
      });
    for (auto& t : threads) t.join();
    for (int r = 0; r < p; ++r) EXPECT_EQ(wrong[r], 0u) << order << " rank " << r;
    EXPECT_THROW(comm->synchronizeRank(p), InvalidArgument);
  }
}

TEST(CudaBackend, ARankThatNeverArrivesTimesOutNamingIt) {
  CCLAB_REQUIRE_GPU();
  auto comm = make(3, "events");
  std::vector<Buffer> bufs;
  for (int r = 0; r < 3; ++r) bufs.push_back(comm->allocate(r, 64));
  CollectiveOptions o;
  o.timeout = std::chrono::milliseconds(200);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      try {
        comm->allReduce(r, bufs[r].data(), bufs[r].data(), 16, DataType::Float32, ReduceOp::Sum, o);
      } catch (const TimeoutError& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_NE(e.find("rank(s) 2"), std::string::npos) << e;
}

TEST(CudaBackend, LowLatencySpinsAreBoundedAndReportATimeout) {
  CCLAB_REQUIRE_GPU();
  auto comm = make(2, "ll");
  std::vector<Buffer> bufs;
  for (int r = 0; r < 2; ++r) bufs.push_back(comm->allocate(r, 4096));
  std::vector<RankBuffers> rb{{bufs[0].data(), bufs[0].data()}, {bufs[1].data(), bufs[1].data()}};
  CollectiveOptions o;
  o.timeout = std::chrono::milliseconds(100);
  o.straggler = {.rank = 1, .startDelay = std::chrono::milliseconds(1500)};  // rank 1 starts long after rank 0 gives up
  comm->runGroup({Collective::AllReduce, 1000, DataType::Float32, ReduceOp::Sum, 0}, rb, o);
  try {
    comm->synchronize();
    FAIL() << "expected a TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 timed out waiting for rank 1 to start"), std::string::npos) << e.what();
  }
  // The flags were reset: the communicator works again.
  const Case c{Collective::AllReduce, Algorithm::Ring, 1000};
  EXPECT_EQ(wrongAfter(*comm, c, 4), 0u);
}

// The report names the late rank, not a waiter on a waiter: ring over 4 ranks with rank 2 late. Rank 3
// waits for rank 2 to start; ranks 0 and 1 wait on steps of ranks that did start; rank 2's own other
// blocks wait on rank 2. Only the first may report first (ll_kernel.cu, Spinner).
TEST(CudaBackend, LowLatencyTimeoutNamesTheLateRank) {
  CCLAB_REQUIRE_GPU();
  auto comm = make(4, "ll");
  std::vector<Buffer> bufs;
  std::vector<RankBuffers> rb;
  for (int r = 0; r < 4; ++r) {
    bufs.push_back(comm->allocate(r, std::size_t{4} << 20));  // several blocks per rank
    rb.push_back({bufs.back().data(), bufs.back().data()});
  }
  CollectiveOptions o;
  o.algorithm = Algorithm::Ring;
  o.timeout = std::chrono::milliseconds(100);
  o.straggler = {.rank = 2, .startDelay = std::chrono::milliseconds(1500)};
  comm->runGroup({Collective::AllReduce, std::int64_t{1} << 20, DataType::Float32, ReduceOp::Sum, 0}, rb, o);
  try {
    comm->synchronize();
    FAIL() << "expected a TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 3 timed out waiting for rank 2 to start"), std::string::npos) << e.what();
  }
}

// Rank 2 starts 50 ms late; rank 0 must not finish before it. Timed on rank 0 alone: copyFromRank(0)
// waits only for rank 0's stream (an event on it), never for the straggler's own delay, so a broken
// dependency (rank 0 reading rank 2's chunk before rank 2 wrote it) shows as a short time and a wrong
// sum. With events each rank has its own stream; with graph and ll the ranks of a device share one
// (docs/cuda.md), so there the test checks that the delay is injected inside the one launch.
TEST(CudaBackend, StragglerDelaysTheWholeGroup) {
  CCLAB_REQUIRE_GPU();
  constexpr int kRanks = 4, kStraggler = 2;
  constexpr std::int64_t kCount = 1000;
  constexpr auto kDelay = std::chrono::milliseconds(50);
  for (const char* order : kOrders)
    for (Algorithm algo : {Algorithm::Ring, Algorithm::HalvingDoubling}) {
      auto comm = make(kRanks, order);
      const DataSpec spec{DataType::Float32, ReduceOp::Sum, kRanks, 77};
      std::vector<Buffer> bufs;
      std::vector<RankBuffers> rb;
      std::vector<float> host(kCount);
      for (int r = 0; r < kRanks; ++r) bufs.push_back(comm->allocate(r, kCount * sizeof(float)));
      for (int r = 0; r < kRanks; ++r) rb.push_back({bufs[r].data(), bufs[r].data()});
      auto refill = [&] {
        for (int r = 0; r < kRanks; ++r) {
          fillInput(spec, r, 0, kCount, host.data());
          comm->copyToRank(r, bufs[r].data(), host.data(), kCount * sizeof(float));
        }
      };
      CollectiveOptions o = testing::gpuTestOptions();
      o.algorithm = algo;
      o.straggler = {.rank = kStraggler, .startDelay = kDelay};
      const CollectiveArgs args{Collective::AllReduce, kCount, DataType::Float32, ReduceOp::Sum, 0};
      refill();
      comm->runGroup(args, rb, o);  // warm-up (graph capture, table upload)
      comm->synchronize();
      refill();
      const auto t0 = std::chrono::steady_clock::now();
      comm->runGroup(args, rb, o);
      comm->copyFromRank(0, host.data(), bufs[0].data(), kCount * sizeof(float));  // waits for rank 0 only
      const auto rank0Done = std::chrono::steady_clock::now() - t0;
      comm->synchronize();
      EXPECT_GE(rank0Done, kDelay) << order << " " << plan::name(algo) << ": rank 0 finished before the straggler started";
      std::vector<float> want(kCount);
      fillExpectedReduce(spec, 0, kCount, want.data());
      EXPECT_EQ(countWrong(DataType::Float32, host.data(), want.data(), kCount), 0u) << order << " " << plan::name(algo);
    }
}

TEST(CudaBackend, ZeroOnRankClearsDeviceMemoryExactly) {
  CCLAB_REQUIRE_GPU();
  auto comm = make(2, "events");
  constexpr std::size_t kBytes = (std::size_t{3} << 20) + 13;  // over one chunk, odd
  Buffer b = comm->allocate(1, kBytes);
  std::vector<unsigned char> host(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) host[i] = static_cast<unsigned char>(1 + i % 251);
  comm->copyToRank(1, b.data(), host.data(), kBytes);
  comm->zeroOnRank(1, static_cast<unsigned char*>(b.data()) + 5, kBytes - 10);
  comm->copyFromRank(1, host.data(), b.data(), kBytes);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < kBytes; ++i)
    bad += host[i] != ((i >= 5 && i < kBytes - 5) ? 0 : 1 + i % 251);
  EXPECT_EQ(bad, 0u);
}

TEST(CudaBackend, DescribesItselfAndRejectsBadArguments) {
  CCLAB_REQUIRE_GPU();
  auto comm = make(8, "graph");
  const std::string d = comm->description();
  EXPECT_NE(d.find("cuda: 8 ranks on"), std::string::npos) << d;
  EXPECT_NE(d.find("order=graph"), std::string::npos) << d;
  EXPECT_THROW(make(2, "fast"), InvalidArgument);
  std::vector<RankBuffers> nulls(8);
  EXPECT_THROW(comm->runGroup({Collective::AllReduce, 10, DataType::Float32, ReduceOp::Sum, 0}, nulls, {}),
               InvalidArgument);
  EXPECT_THROW(comm->runGroup({Collective::AllReduce, 10, DataType::Float32, ReduceOp::Sum, 0},
                              std::span<const RankBuffers>(nulls.data(), 3), {}),
               InvalidArgument);
}

}  // namespace
}  // namespace cclab
