// The CUDA backend under mpirun (`--backend cuda` launched by an MPI launcher; "GPUs in
// processes"): P processes of K ranks each (global rank = process * K + k; -g K, default 1), each
// process on one GPU (gpu_proc/proc_device_map.h), plans run by the multi-process executor
// (gpu_proc_executor.h: CUDA IPC within a node, pinned staging and MPI between nodes). Buffers must
// come from allocate() (device memory exported by IPC handle); a call on other memory is refused
// naming the rank. Calls are synchronous (synchronize() has nothing to wait for). With K > 1 a call
// is one runGroup for the process's K ranks (per-rank calls from K threads would call MPI from
// threads other than the main one: refused). Not built: the events/graph/ll orderings across
// processes (one host-driven order), device pointers to a CUDA-aware MPI (detected and reported;
// staging is used either way).
#pragma once

#include <functional>
#include <memory>

#include "collectives/call/communicator_base.h"
#include "collectives/gpu_proc/proc_device.h"

namespace cclab::mpi {

struct GpuProcConfig {
  int ranksPerProcess = 1;  // -g: K ranks per process, 1..GpuProcExecutor::kMaxRanksPerProcess
  int ranksPerNode = 0;     // > 0: emulate nodes of this many consecutive ranks (a multiple of K; staging between them)
  // Makes the device for an ordinal of this process's visible devices (cuda::makeCudaProcDevice, or a
  // host stand-in in the tests); visibleDevices: how many it sees.
  std::function<std::unique_ptr<cuda::ProcDevice>(int ordinal)> makeDevice;
  int visibleDevices = 1;
};

// Throws InvalidArgument for an unsupported config; a failure while setting up the job ends the job
// (MPI_Abort) after one line, so no process waits for a peer that gave up.
std::unique_ptr<Communicator> makeGpuProcCommunicator(const GpuProcConfig& config);

// For a test: staged messages this communicator's process has sent to other nodes.
long long stagedMessagesSent(const Communicator& comm);

}  // namespace cclab::mpi
