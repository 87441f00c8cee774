// The multi-process CUDA executor ("GPUs in processes", docs/cuda.md): P processes of K ranks each
// (global rank = process * K + k), each process on its GPU (gpu_proc/proc_device_map.h), running the CUDA
// backend's lowering (cuda/lowering.h) of a plan for its own ranks only.
//
// Per call:
//  0. arrival: every rank of the node waits (the call's timeout) until the others arrived at the call,
//     so a late rank is named instead of hanging in the exchange's MPI collective;
//  1. exchange: every process of a node all-gathers a record of its rank's buffers as CUDA IPC
//     handles (gpu_proc/ipc_exchange.h over node_exchange.h's MPI transport) and opens its peers' (cached
//     per handle; mappings no longer listed are closed at the next exchange);
//  2. its programs (one per (rank, plan channel)) advance side by side: each runs its next step as soon
//     as the steps it names on the same node are done (progress words in a shared segment of the
//     node, polled; no progress for the call's timeout is a TimeoutError naming what it waited for)
//     and reads the source — its own memory, a peer's through the IPC mapping, or for a peer on
//     another node the staged message (gpu_proc/staging_plan.h: the sender copied it into pinned host
//     memory after its `ready` step and sent it with MPI_Isend; this rank posted every MPI_Irecv at
//     the start) — and reduce-copies on the device; then it publishes its progress, snapshots the
//     messages whose data is now ready, and posts the sends due;
//  3. its final waits (readers of its last sends on the node) and its sends complete.
// Progress words count up across calls (start = base + 1, step i = base + i + 2, base += steps + 1
// after each call, the same arithmetic in every process), so they are never reset. Host-driven: one
// synchronous device call per step, no device-side waits; a first, correct version to measure
// against. Between nodes it always stages through pinned memory (the OpenMPI here is not CUDA-aware;
// cudaAwareMpi() says which an MPI is).
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <vector>

#include "collectives/gpu_proc/ipc_exchange.h"
#include "collectives/cuda/lowering.h"
#include "collectives/gpu_proc/proc_device.h"
#include "collectives/gpu_proc/staging_plan.h"
#include "collectives/mpi/mpi_world.h"
#include "collectives/gpu_proc/node_exchange.h"
#include "collectives/proc/shared_wait.h"
#include "collectives/proc/shm_segment.h"

namespace cclab::mpi {

// One of a rank's buffers: an allocation from ProcDevice::allocate (its base and IPC handle) and
// where in it the buffer lies. bytes == 0: the call does not use it.
struct DeviceRegion {
  std::byte* base = nullptr;
  cuda::IpcHandle handle{};
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

struct LocalRankBuffers {
  int rank = 0;
  std::array<DeviceRegion, 3> buffers{};  // by plan::Buf: input, output, scratch
};

struct GpuProcCall {
  const cuda::LoweredPlan* lowered = nullptr;
  const cuda::StagingPlan* staging = nullptr;
  std::vector<LocalRankBuffers> ranks;  // this process's ranks, ascending
  DataType type = DataType::Float32;
  ReduceOp op = ReduceOp::Sum;
  std::chrono::milliseconds timeout{30000};
};

class GpuProcExecutor {
 public:
  // K = ranksPerProcess (at most kMaxRanksPerProcess: MPI tags carry (channel, sender, receiver)).
  GpuProcExecutor(const World& world, int ranksPerProcess, cuda::ProcDevice& device, std::chrono::milliseconds setupTimeout);
  static constexpr int kMaxRanksPerProcess = 16;
  ~GpuProcExecutor();
  GpuProcExecutor(const GpuProcExecutor&) = delete;
  GpuProcExecutor& operator=(const GpuProcExecutor&) = delete;

  // Throws TimeoutError naming what it waited for, Error for MPI/device failures.
  void run(const GpuProcCall& call);

  [[nodiscard]] const NodeComm& node() const { return node_; }
  [[nodiscard]] long long stagedSent() const { return stagedSent_; }  // tests: messages sent to other nodes
  [[nodiscard]] long long stagedBytes() const { return stagedBytes_; }
  [[nodiscard]] std::size_t openImports() const { return imports_.size(); }

 private:
  struct Run;
  proc::SharedWord& word(int rank, int channel) const;
  proc::SharedWord& arrival(int rank) const;  // the last call the rank arrived at
  std::byte* peerBase(const cuda::ProcessRecord& owner, const cuda::ExportedRegion& region);
  std::byte* growPinned(std::byte*& p, std::size_t& have, std::size_t want);

  [[nodiscard]] int processOf(int rank) const { return rank / k_; }
  [[nodiscard]] int nodeOf(int rank) const { return world_.node(processOf(rank)); }

  const World& world_;
  int k_;
  int nranks_;
  cuda::ProcDevice& device_;
  NodeComm node_;
  MpiRecordTransport transport_;
  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate of the world's: staged messages never meet other traffic
  proc::ShmSegment control_;
  std::vector<std::uint32_t> base_;  // per (rank, channel): progress counted before this call
  std::uint64_t sequence_ = 0;
  std::map<std::pair<int, cuda::IpcHandle>, std::byte*> imports_;
  std::byte* pinnedSend_ = nullptr;
  std::byte* pinnedRecv_ = nullptr;
  std::size_t pinnedSendBytes_ = 0, pinnedRecvBytes_ = 0;
  long long stagedSent_ = 0, stagedBytes_ = 0;
};

}  // namespace cclab::mpi
