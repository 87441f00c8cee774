// The peers' command line: the subset of all_reduce_perf's flags that makes sense for another
// library's allreduce (sum only): -b -e -f -i -n -w -m -c -a --iter-bytes -d -J -h, and -g where the
// peer spawns its ranks itself (Gloo: threads; OpenMPI takes its ranks from mpirun -np).
#pragma once

#include <string>

#include "bench/report/cli.h"
#include "bench/report/iteration.h"
#include "bench/report/report_types.h"
#include "collectives/core/dtype.h"

namespace cclab::bench {

struct PeerOptions {
  SweepOptions sweep;
  IterationOptions iteration;
  DataType type = DataType::Float32;
  int nranks = 1;
  std::string jsonPath;
  bool help = false;
};

// The types every peer maps onto its own (MPI_FLOAT, MPI_DOUBLE, MPI_INT32_T; gloo templates).
bool peerSupports(DataType t);

void addPeerFlags(CommandLine& cli, PeerOptions& o, bool ranksFlag);

// Refuses (UsageError with both numbers) a run whose buffers cannot fit in MemAvailable: each of the
// `ranksHere` ranks on this machine holds send, receive and (with -c) expected buffers of -e bytes.
void requirePeerMemory(const PeerOptions& o, int ranksHere);

}  // namespace cclab::bench
