// The backend factory: which backends this build has, and the communicator of each, made from the
// CCLAB_* knobs that shape it (collectives/core/knobs.h).
#include "collectives/communicator.h"

#include "collectives/core/knobs.h"
#include "collectives/host/host_communicator.h"
#ifdef CCLAB_WITH_CUDA_BACKEND
#include "collectives/cuda/cuda_communicator.h"
#endif
#ifdef CCLAB_WITH_NCCL_BACKEND
#include "collectives/nccl/nccl_communicator.h"
#endif
#ifdef CCLAB_WITH_PROC_BACKEND
#include "collectives/mpi/mpi_world.h"
#include "collectives/proc/proc_communicator.h"
#endif
#ifdef CCLAB_WITH_PROC_BACKEND
#include "collectives/gpu_proc/gpu_proc_communicator.h"
#include "collectives/gpu_proc/host_proc_device.h"
#include "collectives/proc/shm_segment.h"
#ifdef CCLAB_WITH_CUDA_BACKEND
#include "collectives/gpu_proc/cuda_proc_device.h"
#include "collectives/cuda/device_set.h"
#endif
#endif

namespace cclab {
namespace {

// CCLAB_LL_SHARES=0 turns the host's shares off (a thread per rank for every call), CCLAB_LL_GATHER=0
// its gathered one-shot calls (every rank folds and reports done); unset or 1: on. To compare.
// CCLAB_LL_MAX_BYTES: the LL threshold; CCLAB_BIND_RANKS=1: rank threads pinned to cores.
host::HostConfig hostConfig() {
  return {.llShares = knobs::flag(knobs::Id::LlShares).value_or(true),
          .llGather = knobs::flag(knobs::Id::LlGather).value_or(true),
          .llMaxBytes = host::llMaxBytesFromEnvironment(host::kLlDefaultMaxBytes),
          .bindRanks = knobs::flag(knobs::Id::BindRanks).value_or(false)};
}

}  // namespace

#ifdef CCLAB_WITH_PROC_BACKEND
namespace {

// CCLAB_CUDA_PROC_STANDIN=host: the CUDA backend under mpirun runs its protocol on a host stand-in
// device (gpu_proc/host_proc_device.h), for rehearsals on machines without a GPU.
bool cudaProcStandIn() { return knobs::text(knobs::Id::CudaProcStandIn) == "host"; }

// CCLAB_RANKS_PER_NODE: emulated nodes (0: one node).
int ranksPerNode() { return static_cast<int>(knobs::integer(knobs::Id::RanksPerNode).value_or(0)); }

// The process backend: emulated nodes, the shared segment's size (CCLAB_PROC_SHM_BYTES) and the
// transport (CCLAB_PROC_TRANSPORT=mpi: every pair over MPI).
mpi::ProcConfig procConfig(const CommConfig& config) {
  return {.ranksPerProcess = config.nranks,
          .ranksPerNode = ranksPerNode(),
          .channels = 1,
          .shmBytes = static_cast<std::size_t>(knobs::integer(knobs::Id::ProcShmBytes).value_or(0)),
          .overMpi = knobs::text(knobs::Id::ProcTransport) == "mpi",
          .llMaxBytes = host::llMaxBytesFromEnvironment(mpi::kProcLlDefaultMaxBytes)};
}

std::unique_ptr<Communicator> makeCudaUnderMpi(const CommConfig& config) {
  mpi::GpuProcConfig c{.ranksPerProcess = config.nranks, .ranksPerNode = ranksPerNode(), .makeDevice = {}, .visibleDevices = 1};
  if (cudaProcStandIn()) {
    c.makeDevice = [](int) { return std::make_unique<mpi::HostProcDevice>(proc::makeJobId(), 0); };
  } else {
#ifdef CCLAB_WITH_CUDA_BACKEND
    c.makeDevice = [](int ordinal) { return cuda::makeCudaProcDevice(ordinal); };
    c.visibleDevices = cuda::visibleDeviceCount();
#else
    throw Error("cuda backend unavailable: this build has no CUDA backend (nvcc was not found at configure time)");
#endif
  }
  return mpi::makeGpuProcCommunicator(c);
}

}  // namespace
#endif

bool backendAvailable(Backend b, std::string* why) {
  [[maybe_unused]] auto no = [&](const char* reason) {
    if (why) *why = reason;
    return false;
  };
  switch (b) {
    case Backend::Host: return true;
    case Backend::Cuda:
#ifdef CCLAB_WITH_PROC_BACKEND
      if (mpi::launchedByMpi() && cudaProcStandIn()) return true;
#endif
#ifdef CCLAB_WITH_CUDA_BACKEND
      return cuda::cudaAvailable(why);
#else
      return no("this build has no CUDA backend (nvcc was not found at configure time)");
#endif
    case Backend::Nccl:
#ifdef CCLAB_WITH_NCCL_BACKEND
      return nccl::ncclAvailable(why);
#else
      return no("this build has no NCCL backend");
#endif
    case Backend::Proc:
#ifdef CCLAB_WITH_PROC_BACKEND
      if (!mpi::launchedByMpi()) return no("the proc backend runs under mpirun (one process per rank)");
      return true;
#else
      return no("this build has no process backend (OpenMPI was not found at configure time)");
#endif
  }
  return false;
}

std::unique_ptr<Communicator> makeCommunicator(Backend b, const CommConfig& config) {
  if (config.nranks < 1) throw InvalidArgument("nranks must be >= 1, got " + std::to_string(config.nranks));
  std::string why;
  if (!backendAvailable(b, &why)) throw Error(std::string(name(b)) + " backend unavailable: " + why);
  switch (b) {
    case Backend::Host: return host::makeHostCommunicator(config.nranks, hostConfig());
    case Backend::Cuda:
#ifdef CCLAB_WITH_PROC_BACKEND
      if (mpi::launchedByMpi()) return makeCudaUnderMpi(config);  // GPUs in processes (docs/cuda.md)
#endif
#ifdef CCLAB_WITH_CUDA_BACKEND
      return cuda::makeCudaCommunicator(config);
#endif
      break;
#ifdef CCLAB_WITH_NCCL_BACKEND
    case Backend::Nccl: return nccl::makeNcclCommunicator(config);
#endif
#ifdef CCLAB_WITH_PROC_BACKEND
    case Backend::Proc: return mpi::makeProcCommunicator(procConfig(config));
#endif
    default: break;
  }
  throw Error(std::string(name(b)) + " backend is not built");
}

}  // namespace cclab
