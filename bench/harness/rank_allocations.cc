// Every rank's buffers for a run, and the host memory a run needs before it allocates (rank_allocations.h).
#include "bench/harness/rank_allocations.h"

#include <algorithm>

#include "collectives/conventions/memory_budget.h"

namespace cclab::bench {
namespace {

// Writes zeros over a whole buffer where it lives (first touch on the host, a memset on a GPU).
void touch(Communicator& comm, int rank, const Buffer& b) { comm.zeroOnRank(rank, b.data(), b.bytes()); }

}  // namespace

RunBuffers largestBuffers(plan::Collective c, std::int64_t maxBytes, const std::vector<DataType>& types, int nranks) {
  RunBuffers b;
  for (DataType t : types) {
    const CollectiveShape shape = shapeOf(c, maxBytes, sizeOf(t), nranks);
    const auto w = static_cast<std::int64_t>(sizeOf(t));
    b.sendBytes = std::max(b.sendBytes, static_cast<std::size_t>(shape.inputCount * w));
    b.recvBytes = std::max(b.recvBytes, static_cast<std::size_t>(std::max(shape.inputCount, shape.outputCount) * w));
  }
  return b;
}

std::int64_t hostBytesNeeded(const RunBuffers& b, int nranks, bool ranksOnHost, bool check) {
  constexpr int kStagingBuffers = 3;  // HostStaging: data, expected, poison
  const auto send = static_cast<std::int64_t>(b.sendBytes), recv = static_cast<std::int64_t>(b.recvBytes);
  const std::int64_t staging = check ? conventions::saturatingBytes(kStagingBuffers, std::max(send, recv)) : 0;
  if (!ranksOnHost) return staging;
  return conventions::saturatingBytes(nranks, conventions::saturatingBytes(1, send, recv), staging);
}

RankAllocations::RankAllocations(Communicator& comm, std::size_t sendBytes, std::size_t recvBytes) : recvBytes_(recvBytes) {
  const int n = comm.nranks();
  send_.resize(static_cast<std::size_t>(n));
  recv_.resize(static_cast<std::size_t>(n));
  for (int r : comm.localRanks()) {  // a process of the proc backend holds its own rank only
    send_[static_cast<std::size_t>(r)] = comm.allocate(r, sendBytes);
    recv_[static_cast<std::size_t>(r)] = comm.allocate(r, recvBytes);
    touch(comm, r, send_[static_cast<std::size_t>(r)]);
    touch(comm, r, recv_[static_cast<std::size_t>(r)]);
  }
}

RankBuffers RankAllocations::buffersFor(int rank, plan::Collective c, const CollectiveShape& shape, std::size_t elemSize,
                                   bool inPlace) const {
  auto* recv = static_cast<std::byte*>(recv_[static_cast<std::size_t>(rank)].data());
  if (!inPlace) return {send_[static_cast<std::size_t>(rank)].data(), recv};
  const auto in = static_cast<std::size_t>(plan::inPlaceInputOffset(c, rank, shape.count)) * elemSize;
  const auto out = static_cast<std::size_t>(plan::inPlaceOutputOffset(c, rank, shape.count)) * elemSize;
  return {recv + in, recv + out};
}

}  // namespace cclab::bench
