// The host backend: ranks are threads of this process, running plans on a HostExecutor.
// A group call runs rank 0 on the calling thread and the others on persistent worker threads.
#pragma once

#include <memory>

#include "collectives/call/communicator_base.h"
#include "collectives/host/ll_path.h"

namespace cclab::host {

// Default pipeline slice for the host backend: large enough to amortise a slot handshake (~100 ns),
// small enough that a slice stays in L2 while it is forwarded (measured in docs/results/).
inline constexpr std::size_t kDefaultSliceBytes = 256 * 1024;

// Channels when CollectiveOptions::channels is 0. The ranks' threads run their channels interleaved
// on one thread each, so more channels add no copy bandwidth; measured in docs/results/cpu-channels.md.
inline constexpr int kDefaultChannels = 1;

// What shapes a host communicator beyond its rank count; the factory (collectives/communicator.cc)
// fills it from the knobs
// (CCLAB_LL_SHARES, CCLAB_LL_GATHER, CCLAB_LL_MAX_BYTES and CCLAB_BIND_RANKS).
struct HostConfig {
  // More ranks than cores: small group calls run as one thread per core, each a share of the ranks;
  // false: a thread per rank for every call (to compare).
  bool llShares = true;
  // Gathered one-shot group calls (ll_executor.h); false: every rank folds and reports done (to compare).
  bool llGather = true;
  // Calls up to this many bytes (largest buffer) run on the LL path (ll_path.h); 0: never.
  std::size_t llMaxBytes = kLlDefaultMaxBytes;
  // Each rank's thread pinned to CPU rank mod cores (LlPath::bindRanks).
  bool bindRanks = false;
};

std::unique_ptr<Communicator> makeHostCommunicator(int nranks, const HostConfig& config = {});

// Host memory of `bytes` aligned to `align` (a power of two), freed with the Buffer; throws Error
// "<who>: cannot allocate N bytes". The backends whose ranks live in host memory use it.
Buffer allocateHostBuffer(std::size_t bytes, std::size_t align, const char* who);

}  // namespace cclab::host
