// Every rank's send and receive buffers, allocated once per run at the largest size and reused for
// every size (a first touch of a fresh 4 KiB page costs 10-15 us: allocating per
// size would measure the kernel, not the collective). Written once at allocation so no page is fresh
// when timing starts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench/report/collective_shape.h"
#include "collectives/communicator.h"

namespace cclab::bench {

// One rank's largest send and receive buffers over the types swept, at the sweep's largest size.
struct RunBuffers {
  std::size_t sendBytes = 0;
  std::size_t recvBytes = 0;
};
RunBuffers largestBuffers(plan::Collective c, std::int64_t maxBytes, const std::vector<DataType>& types, int nranks);

// Host bytes a run allocates before its first size: with `ranksOnHost` (host backend) every rank's send
// and receive buffers; with `check` the three host staging buffers of the reference check (data,
// expected, poison), each as large as one rank's largest buffer. Saturates at INT64_MAX.
std::int64_t hostBytesNeeded(const RunBuffers& b, int nranks, bool ranksOnHost, bool check);

// The memory every local rank owns for a run (Buffers from Communicator::allocate), which hands out
// each call's RankBuffers (the call vocabulary's send/recv pair, collectives/call/vocabulary.h).
class RankAllocations {
 public:
  // sendBytes/recvBytes: the most any measured size needs on one rank.
  RankAllocations(Communicator& comm, std::size_t sendBytes, std::size_t recvBytes);

  // Rank r's buffers for one call (r one of the communicator's localRanks()). In place follows NCCL's layout inside the receive buffer
  // (plan::inPlaceInputOffset / inPlaceOutputOffset).
  [[nodiscard]] RankBuffers buffersFor(int rank, plan::Collective c, const CollectiveShape& shape, std::size_t elemSize,
                                       bool inPlace) const;
  [[nodiscard]] void* recvBase(int rank) const { return recv_[static_cast<std::size_t>(rank)].data(); }
  [[nodiscard]] std::size_t recvBytes() const { return recvBytes_; }

 private:
  std::vector<Buffer> send_;
  std::vector<Buffer> recv_;
  std::size_t recvBytes_ = 0;
};

}  // namespace cclab::bench
