#include "collectives/gpu_proc/node_exchange.h"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <climits>
#include <numeric>

#include "collectives/core/errors.h"

namespace cclab::mpi {

NodeComm::NodeComm(const World& world) {
  check(MPI_Comm_split(world.comm(), world.node(world.rank()), world.rank(), &comm_), "MPI_Comm_split (node)");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank (node)");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size (node)");
}

NodeComm::~NodeComm() {
  if (comm_ != MPI_COMM_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
}

std::vector<std::vector<std::byte>> MpiRecordTransport::allGather(std::span<const std::byte> mine) {
  const int n = node_.size();
  const int len = messageBytes(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(n));
  check(MPI_Allgather(&len, 1, MPI_INT, lengths.data(), 1, MPI_INT, node_.comm()), "MPI_Allgather (IPC record lengths)");
  std::vector<int> displs(static_cast<std::size_t>(n));
  long long total = 0;
  for (int i = 0; i < n; ++i) {
    if (lengths[static_cast<std::size_t>(i)] < 0) throw Error("cuda ipc: a negative record length from a peer");
    displs[static_cast<std::size_t>(i)] = static_cast<int>(total);
    total += lengths[static_cast<std::size_t>(i)];
    if (total > INT_MAX) throw Error("cuda ipc: the node's records exceed one MPI message");
  }
  std::vector<std::byte> all(static_cast<std::size_t>(total));
  check(MPI_Allgatherv(mine.data(), len, MPI_BYTE, all.data(), lengths.data(), displs.data(), MPI_BYTE, node_.comm()),
        "MPI_Allgatherv (IPC records)");
  std::vector<std::vector<std::byte>> out;
  for (int i = 0; i < n; ++i) {
    const auto b = all.begin() + displs[static_cast<std::size_t>(i)];
    out.emplace_back(b, b + lengths[static_cast<std::size_t>(i)]);
  }
  return out;
}

CudaAwareness cudaAwareMpi() {
  CudaAwareness a;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  a.buildTime = true;
#endif
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  a.runTime = MPIX_Query_cuda_support() == 1;
  a.text = std::string("MPI ") + (a.buildTime ? "built with" : "built without") + " CUDA support, " +
           (a.runTime ? "CUDA-aware at run time" : "not CUDA-aware at run time");
#else
  a.text = "MPI without the CUDA extension (mpi-ext.h has no MPIX_CUDA_AWARE_SUPPORT): not CUDA-aware";
#endif
  return a;
}

}  // namespace cclab::mpi
