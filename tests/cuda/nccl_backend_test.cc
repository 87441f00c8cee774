// The NCCL backend: correct against the exact reference where it runs; with more ranks than devices
// the factory says "NCCL needs one device per rank" (the benchmark prints N/A). Skips without a GPU
// or without a loadable NCCL (fails instead under CCLAB_EXPECT_GPU=1, gpu_required.h).
#include <gtest/gtest.h>

#include <vector>

#include "collectives/communicator.h"
#include "collectives/core/test_data.h"
#include "collectives/cuda/device_set.h"
#include "tests/cuda/gpu_required.h"

namespace cclab {
namespace {


TEST(NcclBackend, AllReduceEveryTypeAndOpOnAsManyRanksAsDevices) {
  CCLAB_REQUIRE_NCCL();
  const int p = cuda::visibleDeviceCount();
  auto comm = makeCommunicator(Backend::Nccl, {p});
  const std::int64_t n = 1001;
  for (DataType t : kAllDataTypes)
    for (ReduceOp op : kAllReduceOps) {
      SCOPED_TRACE(std::string(name(t)) + "/" + std::string(name(op)));
      const DataSpec spec{t, op, p, 11};
      const std::size_t bytes = static_cast<std::size_t>(n) * sizeOf(t);
      std::vector<Buffer> in, out;
      std::vector<RankBuffers> bufs;
      std::vector<unsigned char> host(bytes);
      for (int r = 0; r < p; ++r) {
        in.push_back(comm->allocate(r, bytes));
        out.push_back(comm->allocate(r, bytes));
        fillInput(spec, r, 0, static_cast<std::size_t>(n), host.data());
        comm->copyToRank(r, in.back().data(), host.data(), bytes);
        bufs.push_back({in.back().data(), out.back().data()});
      }
      comm->runGroup({plan::Collective::AllReduce, n, t, op, 0}, bufs, testing::gpuTestOptions());
      comm->synchronize();
      std::vector<unsigned char> want(bytes);
      fillExpectedReduce(spec, 0, static_cast<std::size_t>(n), want.data());
      for (int r = 0; r < p; ++r) {
        comm->copyFromRank(r, host.data(), out[r].data(), bytes);
        EXPECT_EQ(countWrong(t, host.data(), want.data(), static_cast<std::size_t>(n)), 0u) << "rank " << r;
      }
    }
}

// The trainer waits for one rank at a time (Communicator::synchronizeRank): each rank's result is
// complete after waiting for its own stream, which is exposed (rankStream) for ordering work with it.
TEST(NcclBackend, EachRankSynchronizesItsOwnStream) {
  CCLAB_REQUIRE_NCCL();
  const int p = cuda::visibleDeviceCount();
  auto comm = makeCommunicator(Backend::Nccl, {p});
  const std::int64_t n = 777;
  const DataSpec spec{DataType::Float32, ReduceOp::Sum, p, 5};
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  std::vector<Buffer> buf;
  std::vector<RankBuffers> bufs;
  std::vector<unsigned char> host(bytes), want(bytes);
  for (int r = 0; r < p; ++r) {
    buf.push_back(comm->allocate(r, bytes));
    fillInput(spec, r, 0, static_cast<std::size_t>(n), host.data());
    comm->copyToRank(r, buf.back().data(), host.data(), bytes);
    bufs.push_back({buf.back().data(), buf.back().data()});
    EXPECT_NE(comm->rankStream(r), nullptr);
  }
  comm->runGroup({plan::Collective::AllReduce, n, DataType::Float32, ReduceOp::Sum, 0}, bufs, testing::gpuTestOptions());
  fillExpectedReduce(spec, 0, static_cast<std::size_t>(n), want.data());
  for (int r = p - 1; r >= 0; --r) {
    comm->synchronizeRank(r);
    comm->copyFromRank(r, host.data(), buf[static_cast<std::size_t>(r)].data(), bytes);
    EXPECT_EQ(countWrong(DataType::Float32, host.data(), want.data(), static_cast<std::size_t>(n)), 0u) << "rank " << r;
  }
  EXPECT_THROW(comm->synchronizeRank(p), InvalidArgument);
}

TEST(NcclBackend, MoreRanksThanDevicesSaysSo) {
  CCLAB_REQUIRE_NCCL();
  const int p = cuda::visibleDeviceCount() + 1;
  try {
    makeCommunicator(Backend::Nccl, {p});
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NCCL needs one device per rank"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cclab
