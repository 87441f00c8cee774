// The process backend (`--backend proc`, chosen by the benchmarks when mpirun launched them): one
// rank per process, or K (the benchmarks' -g under mpirun) as threads of each process (global rank =
// process * K + k, as the CUDA backend under mpirun), bootstrapped by MPI (mpi_world.h). Every rank,
// whichever process it is in, is a peer of its own in shared memory (its ShmExecutor and segment)
// and has its own MPI links to other nodes (mpi_links.h: the K rank threads call MPI one at a time).
//
// Transports: when every rank is on one node, plans run on the shared-memory executor
// (collectives/proc/shm_executor.h: single-copy reads of the peer's segment, futex waits); buffers from
// allocate() live in this rank's shared segment, so collectives on them copy nothing extra, and other
// buffers go through a staging part of the segment (a copy in, a copy out). When the job spans nodes
// (real, or emulated with ranksPerNode), plans run on the MPI executor (mpi_executor.h) for every pair.
// A collective that fails (a timeout, a lost rank) prints its one-line reason and ends the whole job
// (MPI_Abort), so no surviving rank waits in a later call.
#pragma once

#include <memory>

#include "collectives/call/communicator_base.h"

namespace cclab::mpi {

// Calls up to this many bytes (largest buffer) run on the LL rings when the whole job is on one node
// (CCLAB_LL_MAX_BYTES overrides it, as for the host backend). Measured with `mpirun -np N
// all_reduce_perf --algo rd -b 128 -e 2K -f 2` with CCLAB_LL_MAX_BYTES=2048 against 0, 2 rounds
// (docs/results/cpu-peers.md, "Small-message thresholds"): at 2 processes LL won at 128 B (0.24 vs
// 0.33 and 0.77 µs) and lost from 512 B in one round (0.68 vs 0.35: LL writes and polls every 4 bytes
// as a flagged word, the slot path copies once); at 4 processes LL was ahead up to 2 KiB but noisy.
inline constexpr std::size_t kProcLlDefaultMaxBytes = 256;

// Ranks one process may run as threads (-g): a node has at most proc::ShmExecutor::kMaxRanks ranks.
inline constexpr int kMaxProcRanksPerProcess = 64;

struct ProcConfig {
  int ranksPerProcess = 1;  // the benchmarks' -g under mpirun: 1..kMaxProcRanksPerProcess (> 1: not with CCLAB_PROC_TRANSPORT=mpi)
  int ranksPerNode = 0;     // > 0: emulate nodes of this many consecutive ranks (MPI between them); a multiple of K
  int channels = 1;         // plan channels (plan.h)
  // Bytes of this rank's shared segment (half for allocate(), half for staging and scratch), at most
  // what /dev/shm has free per rank; 0: 1 GiB (the factory passes CCLAB_PROC_SHM_BYTES when set).
  std::size_t shmBytes = 0;
  // Every pair over MPI, shared memory unused (CCLAB_PROC_TRANSPORT=mpi, to compare); one rank per process.
  bool overMpi = false;
  // Calls up to this many bytes (largest buffer) run on the LL rings (CCLAB_LL_MAX_BYTES); 0: never.
  std::size_t llMaxBytes = kProcLlDefaultMaxBytes;
};

// Throws InvalidArgument for an unsupported config, Error when MPI or the segments fail.
std::unique_ptr<Communicator> makeProcCommunicator(const ProcConfig& config);

}  // namespace cclab::mpi
