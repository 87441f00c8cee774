#include "bench/harness/rank_memory.h"

#include <algorithm>

namespace cclab::bench {
namespace {

// Writes zeros over a whole buffer where it lives (first touch on the host, a memset on a GPU).
void touch(Communicator& comm, int rank, const Buffer& b) { comm.zeroOnRank(rank, b.data(), b.bytes()); }

}  // namespace

RankMemory::RankMemory(Communicator& comm, std::size_t sendBytes, std::size_t recvBytes) : recvBytes_(recvBytes) {
  const int n = comm.nranks();
  for (int r = 0; r < n; ++r) {
    send_.push_back(comm.allocate(r, sendBytes));
    recv_.push_back(comm.allocate(r, recvBytes));
    touch(comm, r, send_.back());
    touch(comm, r, recv_.back());
  }
}

RankBuffers RankMemory::buffersFor(int rank, plan::Collective c, const CollectiveShape& shape, std::size_t elemSize,
                                   bool inPlace) const {
  auto* recv = static_cast<std::byte*>(recv_[static_cast<std::size_t>(rank)].data());
  if (!inPlace) return {send_[static_cast<std::size_t>(rank)].data(), recv};
  const auto in = static_cast<std::size_t>(plan::inPlaceInputOffset(c, rank, shape.count)) * elemSize;
  const auto out = static_cast<std::size_t>(plan::inPlaceOutputOffset(c, rank, shape.count)) * elemSize;
  return {recv + in, recv + out};
}

}  // namespace cclab::bench
