// The Communicator's shared rules (auto, argument and slice checks, names) and the backend registry.
#include "collectives/communicator.h"

#include <algorithm>
#include <iterator>
#include <span>

#include "collectives/host/host_communicator.h"
#ifdef CCLAB_WITH_CUDA_BACKEND
#include "collectives/cuda/cuda_communicator.h"
#endif
#ifdef CCLAB_WITH_NCCL_BACKEND
#include "collectives/nccl/nccl_communicator.h"
#endif
#ifdef CCLAB_WITH_PROC_BACKEND
#include "collectives/core/knobs.h"
#include "collectives/mpi/mpi_world.h"
#include "collectives/mpi/proc_communicator.h"
#endif
#ifdef CCLAB_WITH_PROC_BACKEND
#include "collectives/mpi/gpu_proc_communicator.h"
#include "collectives/mpi/host_proc_device.h"
#include "collectives/proc/shm_segment.h"
#ifdef CCLAB_WITH_CUDA_BACKEND
#include "collectives/cuda/cuda_proc_device.h"
#include "collectives/cuda/device_set.h"
#endif
#endif

namespace cclab {

std::string_view name(Backend b) {
  switch (b) {
    case Backend::Host: return "host";
    case Backend::Cuda: return "cuda";
    case Backend::Nccl: return "nccl";
    case Backend::Proc: return "proc";
  }
  return "?";
}

Backend parseBackend(std::string_view s) {
  for (Backend b : {Backend::Host, Backend::Cuda, Backend::Nccl, Backend::Proc})
    if (s == name(b)) return b;
  throw InvalidArgument("unknown backend '" + std::string(s) + "' (host, cuda, nccl, proc)");
}

plan::Algorithm autoAlgorithm(const CollectiveArgs& args, int nranks) {
  using plan::Algorithm;
  if (args.collective != plan::Collective::AllReduce) return Algorithm::Ring;
  const auto bytes = static_cast<std::size_t>(args.count) * sizeOf(args.type);
  if (bytes <= kAutoTinyBytes) return Algorithm::RecursiveDoubling;
  return (bytes <= kAutoSmallBytes && nranks > 2) ? Algorithm::HalvingDoubling : Algorithm::Ring;
}

plan::Algorithm autoAlgorithm(const CollectiveArgs& args, int nranks, Backend backend) {
  const std::span<const HostAutoSmallRow> table = backend == Backend::Host   ? std::span<const HostAutoSmallRow>(kHostAutoSmall)
                                                  : backend == Backend::Proc ? std::span<const HostAutoSmallRow>(kProcAutoSmall)
                                                                             : std::span<const HostAutoSmallRow>();
  if (!table.empty() && args.collective == plan::Collective::AllReduce) {
    const HostAutoSmallRow* row = nullptr;
    for (const HostAutoSmallRow& r : table)
      if (r.nranks <= nranks) row = &r;
    const bool measured = row != nullptr && nranks <= table.back().nranks;
    const auto bytes = static_cast<std::size_t>(args.count) * sizeOf(args.type);
    if (measured && bytes <= row->oneshotBytes) return plan::Algorithm::OneShot;
    if (measured && bytes <= row->twoshotBytes) return plan::Algorithm::TwoShot;
  }
  return autoAlgorithm(args, nranks);
}

std::vector<int> Communicator::localRanks() const {
  std::vector<int> all(static_cast<std::size_t>(nranks()));
  for (int r = 0; r < nranks(); ++r) all[static_cast<std::size_t>(r)] = r;
  return all;
}

plan::Algorithm Communicator::resolve(const CollectiveArgs& args, plan::Algorithm requested) const {
  // The algorithm really run: Broadcast/Reduce run dbtree as the tree and ring as the chain.
  return plan::generatedAlgorithm(
      args.collective, requested == plan::Algorithm::Auto ? autoAlgorithm(args, nranks(), backend()) : requested);
}

void checkArgs(const CollectiveArgs& args, int nranks, plan::Algorithm resolved) {
  if (args.count < 0) throw InvalidArgument("count must be >= 0, got " + std::to_string(args.count));
  if (args.root < 0 || args.root >= nranks)
    throw InvalidArgument("root " + std::to_string(args.root) + " is not a rank of " + std::to_string(nranks));
  if (!plan::hasGenerator(args.collective, resolved))
    throw InvalidArgument("no " + std::string(plan::name(resolved)) + " algorithm for " +
                          std::string(plan::name(args.collective)));
  constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;
  if (args.count > kMaxElements / nranks) throw InvalidArgument("count " + std::to_string(args.count) + " is too large");
}

void checkShape(const CollectiveOptions& o, int nranks, plan::Algorithm resolved) {
  if (o.channels < 0 || o.channels > plan::kMaxChannels)
    throw InvalidArgument("channels must be 1.." + std::to_string(plan::kMaxChannels) + " (0: the backend's default), got " +
                          std::to_string(o.channels));
  if (o.ranksPerNode < 0)
    throw InvalidArgument("ranksPerNode must be >= 0 (0: one node), got " + std::to_string(o.ranksPerNode));
  if (resolved == plan::Algorithm::Hierarchical && o.ranksPerNode > 0 && nranks % o.ranksPerNode != 0)
    throw InvalidArgument("hier needs ranksPerNode (" + std::to_string(o.ranksPerNode) + ") to divide the " +
                          std::to_string(nranks) + " ranks");
}

void checkSlicing(const CollectiveArgs& args, int nranks, std::size_t sliceBytes, std::size_t defaultSliceBytes) {
  const std::size_t elem = sizeOf(args.type);
  const std::size_t slice = sliceBytes ? sliceBytes : defaultSliceBytes;
  if (slice == 0 || args.count <= 0) return;  // whole ops, or nothing to cut
  const plan::BufferCounts c = plan::bufferCounts(args.collective, nranks, args.count);
  const std::int64_t largest = std::max(c.input, c.output);
  const auto sliceElems = static_cast<std::int64_t>(std::max<std::size_t>(1, slice / elem));
  const std::int64_t slices = largest / sliceElems + (largest % sliceElems != 0);
  if (slices > kMaxSlicesPerCall)
    throw InvalidArgument("slice of " + std::to_string(slice) + " bytes cuts a " +
                          std::to_string(static_cast<std::size_t>(largest) * elem) + "-byte buffer into " +
                          std::to_string(slices) + " slices, more than " + std::to_string(kMaxSlicesPerCall) +
                          " per call: use a slice of at least " +
                          std::to_string((static_cast<std::size_t>(largest) * elem + kMaxSlicesPerCall - 1) / kMaxSlicesPerCall) +
                          " bytes");
}

std::string_view name(CudaOrder o) {
  switch (o) {
    case CudaOrder::Events: return "events";
    case CudaOrder::Graph: return "graph";
    case CudaOrder::LowLatency: return "ll";
  }
  return "?";
}

std::string cudaOrderNames() {
  std::string names;
  for (CudaOrder o : kAllCudaOrders) names += (names.empty() ? "" : ", ") + std::string(name(o));
  return names;
}

CudaOrder parseCudaOrder(std::string_view s) {
  for (CudaOrder o : kAllCudaOrders)
    if (s == name(o)) return o;
  throw InvalidArgument("unknown order '" + std::string(s) + "' (" + cudaOrderNames() + ")");
}

double RankArrivals::meanLatenessUs() const {
  if (calls <= 0) return 0.0;
  return std::chrono::duration<double, std::micro>(totalLateness).count() / static_cast<double>(calls);
}

double RankArrivals::lastShare() const {
  return calls <= 0 ? 0.0 : static_cast<double>(lastCount) / static_cast<double>(calls);
}

void Communicator::allReduce(int rank, const void* send, void* recv, std::int64_t count, DataType t, ReduceOp op,
                             const CollectiveOptions& o) {
  run(rank, {plan::Collective::AllReduce, count, t, op, 0}, {send, recv}, o);
}
void Communicator::reduceScatter(int rank, const void* send, void* recv, std::int64_t recvCount, DataType t, ReduceOp op,
                                 const CollectiveOptions& o) {
  run(rank, {plan::Collective::ReduceScatter, recvCount, t, op, 0}, {send, recv}, o);
}
void Communicator::allGather(int rank, const void* send, void* recv, std::int64_t sendCount, DataType t,
                             const CollectiveOptions& o) {
  run(rank, {plan::Collective::AllGather, sendCount, t, ReduceOp::Sum, 0}, {send, recv}, o);
}
void Communicator::broadcast(int rank, const void* send, void* recv, std::int64_t count, DataType t, int root,
                             const CollectiveOptions& o) {
  run(rank, {plan::Collective::Broadcast, count, t, ReduceOp::Sum, root}, {send, recv}, o);
}
void Communicator::reduce(int rank, const void* send, void* recv, std::int64_t count, DataType t, ReduceOp op, int root,
                          const CollectiveOptions& o) {
  run(rank, {plan::Collective::Reduce, count, t, op, root}, {send, recv}, o);
}

#ifdef CCLAB_WITH_PROC_BACKEND
namespace {

// CCLAB_CUDA_PROC_STANDIN=host: the CUDA backend under mpirun runs its protocol on a host stand-in
// device (mpi/host_proc_device.h), for rehearsals on machines without a GPU.
bool cudaProcStandIn() { return knobs::text(knobs::Id::CudaProcStandIn) == "host"; }

// CCLAB_RANKS_PER_NODE: emulated nodes (0: one node).
int ranksPerNode() { return static_cast<int>(knobs::integer(knobs::Id::RanksPerNode).value_or(0)); }

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
    case Backend::Host: return host::makeHostCommunicator(config.nranks);
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
    case Backend::Proc: return mpi::makeProcCommunicator({.ranksPerProcess = config.nranks, .ranksPerNode = ranksPerNode()});
#endif
    default: break;
  }
  throw Error(std::string(name(b)) + " backend is not built");
}

}  // namespace cclab
