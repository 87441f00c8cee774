// MPI pieces of the multi-process CUDA backend ("GPUs in processes"):
//  - NodeComm: a communicator of the ranks of one node (real, or emulated with ranksPerNode: the
//    World's node numbers, so emulated nodes are separate here too);
//  - MpiRecordTransport: the IPC record all-gather (gpu_proc/ipc_exchange.h) over it, as MPI_Allgather of
//    the lengths, then MPI_Allgatherv of the bytes;
//  - cudaAwareMpi(): whether this MPI can take device pointers (OpenMPI's MPIX_CUDA_AWARE_SUPPORT at
//    build time and MPIX_Query_cuda_support() at run time). Debian's OpenMPI 4.1 here is built
//    without CUDA, so the backend stages through pinned host memory between nodes.
#pragma once

#include <mpi.h>

#include <string>

#include "collectives/gpu_proc/ipc_exchange.h"
#include "collectives/mpi/mpi_world.h"

namespace cclab::mpi {

class NodeComm {
 public:
  explicit NodeComm(const World& world);
  ~NodeComm();
  NodeComm(const NodeComm&) = delete;
  NodeComm& operator=(const NodeComm&) = delete;
  [[nodiscard]] MPI_Comm comm() const { return comm_; }
  [[nodiscard]] int rank() const { return rank_; }  // position among the node's processes
  [[nodiscard]] int size() const { return size_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

class MpiRecordTransport final : public cuda::RecordTransport {
 public:
  explicit MpiRecordTransport(const NodeComm& node) : node_(node) {}
  std::vector<std::vector<std::byte>> allGather(std::span<const std::byte> mine) override;

 private:
  const NodeComm& node_;
};

struct CudaAwareness {
  bool buildTime = false;  // mpi-ext.h declares MPIX_CUDA_AWARE_SUPPORT 1
  bool runTime = false;    // MPIX_Query_cuda_support() returned 1
  std::string text;        // one line for descriptions and logs
};
CudaAwareness cudaAwareMpi();

}  // namespace cclab::mpi
