#include "collectives/mpi/gpu_proc_communicator.h"

#include <cstdio>
#include <map>
#include <thread>
#include <tuple>

#include "collectives/cuda/buffer_alias.h"
#include "collectives/cuda/lowering.h"
#include "collectives/cuda/proc_device_map.h"
#include "collectives/cuda/slicing.h"
#include "collectives/cuda/staging_plan.h"
#include "collectives/mpi/gpu_proc_executor.h"
#include "collectives/mpi/mpi_world.h"
#include "collectives/mpi/node_exchange.h"
#include "collectives/proc/cleanup_registry.h"

namespace cclab::mpi {
namespace {

constexpr auto kSetupTimeout = std::chrono::seconds(60);

// The device of this process: placements gathered from every process, then the map's choice.
std::unique_ptr<cuda::ProcDevice> deviceFor(const World& world, const GpuProcConfig& c, int& ordinal) {
  const NodeComm node(world);
  const int mine[3] = {world.node(world.rank()), node.rank(), c.visibleDevices};
  std::vector<int> all(3 * static_cast<std::size_t>(world.size()));
  check(MPI_Allgather(mine, 3, MPI_INT, all.data(), 3, MPI_INT, world.comm()), "MPI_Allgather (placements)");
  std::vector<cuda::ProcessPlacement> placements;
  for (int p = 0; p < world.size(); ++p)
    placements.push_back({all[3 * static_cast<std::size_t>(p)], all[3 * static_cast<std::size_t>(p) + 1], all[3 * static_cast<std::size_t>(p) + 2]});
  const cuda::ProcDeviceMap map(std::move(placements), 1);
  ordinal = map.deviceOf(world.rank());
  return c.makeDevice(ordinal);
}

class GpuProcCommunicator final : public Communicator {
 public:
  explicit GpuProcCommunicator(const GpuProcConfig& c) : world_(c.ranksPerNode) {
    device_ = deviceFor(world_, c, ordinal_);
    executor_ = std::make_unique<GpuProcExecutor>(world_, *device_, kSetupTimeout);
    aware_ = cudaAwareMpi();
  }

  Backend backend() const override { return Backend::Cuda; }
  int nranks() const override { return world_.size(); }
  std::vector<int> localRanks() const override { return {world_.rank()}; }
  std::string description() const override {
    return "cuda: " + std::to_string(nranks()) + " ranks as processes on " + std::to_string(world_.nodes()) +
           (world_.emulatedNodes() ? " emulated" : "") + (world_.nodes() == 1 ? " node" : " nodes") + ", rank 0 on " +
           device_->describe() + " (CUDA IPC within a node, pinned staging + MPI between nodes; " + aware_.text +
           "), order=host-driven";
  }
  std::vector<std::string> rankLocations() const override {
    std::vector<std::string> where;
    for (int r = 0; r < nranks(); ++r) {
      const Peer& p = world_.peers()[static_cast<std::size_t>(r)];
      where.push_back("pid " + std::to_string(p.pid) + " on " + p.host + " node " + std::to_string(p.node));
    }
    return where;
  }
  double maxOverProcesses(double v) const override { return world_.maxOf(v); }
  std::int64_t sumOverProcesses(std::int64_t v) const override { return world_.sumOf(v); }
  bool printsReport() const override { return world_.rank() == 0; }
  long long staged() const { return executor_->stagedSent(); }

  void run(int rank, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) override {
    checkRank(rank);
    try {
      runRank(args, buffers, options);
    } catch (const TimeoutError& e) {  // peers may be waiting for this rank: end the job
      std::fprintf(stderr, "%s\n", e.what());
      std::fflush(stderr);
      proc::unlinkRegisteredNow();  // MPI_Abort runs no destructors; the others' are swept (stale sweep)
      world_.abort(3);
    }
  }
  void runGroup(const CollectiveArgs& args, std::span<const RankBuffers> buffers, const CollectiveOptions& options) override {
    if (buffers.size() != 1)
      throw InvalidArgument("cuda proc: runGroup needs this process's one buffer pair, got " + std::to_string(buffers.size()));
    run(world_.rank(), args, buffers[0], options);
  }

  Buffer allocate(int rank, std::size_t bytes) override {
    checkRank(rank);
    auto* p = static_cast<std::byte*>(device_->allocate(std::max<std::size_t>(bytes, 1)));
    allocations_[p] = {std::max<std::size_t>(bytes, 1), device_->exportMemory(p)};
    return Buffer(p, bytes, [this](void* q) {
      allocations_.erase(static_cast<std::byte*>(q));
      device_->release(q);
    });
  }
  void copyToRank(int rank, void* dst, const void* src, std::size_t bytes) override {
    checkRank(rank);
    if (bytes) device_->copy(dst, src, bytes);
  }
  void copyFromRank(int rank, void* dst, const void* src, std::size_t bytes) override {
    checkRank(rank);
    if (bytes) device_->copy(dst, src, bytes);
  }
  void zeroOnRank(int rank, void* dst, std::size_t bytes) override {
    checkRank(rank);
    if (bytes) device_->zero(dst, bytes);
  }

 private:
  struct Allocation {
    std::size_t bytes;
    cuda::IpcHandle handle;
  };
  struct Prepared {
    cuda::LoweredPlan lowered;
    cuda::StagingPlan staging;
  };
  using Key = std::tuple<plan::Collective, plan::Algorithm, std::int64_t, int, int, int, std::int64_t, std::size_t, int, int>;

  void checkRank(int rank) const {
    if (rank != world_.rank())
      throw InvalidArgument("cuda proc: rank " + std::to_string(rank) + " is not this process's (" + std::to_string(world_.rank()) + ")");
  }

  // The region of [p, p + bytes) in an allocation from allocate(); refuses other memory.
  DeviceRegion regionOf(const void* p, std::size_t bytes, const char* what) const {
    DeviceRegion r;
    if (bytes == 0 || p == nullptr) return r;
    const auto* b = static_cast<const std::byte*>(p);
    auto it = allocations_.upper_bound(const_cast<std::byte*>(b));
    if (it == allocations_.begin() || b + bytes > std::prev(it)->first + std::prev(it)->second.bytes)
      throw InvalidArgument("cuda proc: rank " + std::to_string(world_.rank()) + "'s " + what +
                            " buffer is not memory from allocate() (peers import it by CUDA IPC handle)");
    --it;
    r.base = it->first;
    r.handle = it->second.handle;
    r.offset = static_cast<std::uint64_t>(b - it->first);
    r.bytes = bytes;
    return r;
  }

  DeviceRegion scratchRegion(std::size_t bytes) {
    if (bytes > scratchBytes_) {
      if (scratch_) {
        allocations_.erase(scratch_);
        device_->release(scratch_);
        scratch_ = nullptr;
        scratchBytes_ = 0;
      }
      scratch_ = static_cast<std::byte*>(device_->allocate(bytes));
      scratchBytes_ = bytes;
      allocations_[scratch_] = {bytes, device_->exportMemory(scratch_)};
    }
    return bytes ? regionOf(scratch_, bytes, "scratch") : DeviceRegion{};
  }

  void runRank(const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) {
    const int rank = world_.rank(), p = nranks();
    const plan::Algorithm algo = resolve(args, options.algorithm);
    checkArgs(args, p, algo);
    checkShape(options, p, algo);
    checkSlicing(args, p, options.sliceBytes, cuda::kCrossDeviceSliceBytes);
    const std::size_t elem = sizeOf(args.type);
    const plan::BufferCounts counts = plan::bufferCounts(args.collective, p, args.count);
    const bool isRoot = rank == args.root;
    const bool needOutput = args.collective != plan::Collective::Reduce || isRoot;
    if ((counts.input > 0 && !buffers.send) || (needOutput && counts.output > 0 && !buffers.recv))
      throw InvalidArgument("cuda proc: rank " + std::to_string(rank) + " passed a null buffer");
    const std::int64_t slice = cuda::sliceElemsFor(options.sliceBytes, elem, 2);
    const plan::PlanShape shape{options.channels > 0 ? options.channels : 1,
                                options.ranksPerNode > 0 ? options.ranksPerNode : world_.ranksPerNode()};
    const std::size_t inBytes = static_cast<std::size_t>(counts.input) * elem;
    const std::size_t outBytes = needOutput ? static_cast<std::size_t>(counts.output) * elem : 0;
    GpuProcCall call;
    call.buffers[0] = regionOf(buffers.send, inBytes, "input");
    call.buffers[1] = regionOf(buffers.recv, outBytes, "output");
    // In place: the lowering needs to know (cuda/buffer_alias.h); every rank's alias is decided here
    // from its own pointers and agreed through the key below (ranks pass the same layout: NCCL's rule).
    const cuda::BufferAlias alias = cuda::detectAlias(args.collective, rank, args.count, elem, buffers.send, buffers.recv,
                                                      counts.input, counts.output);
    const Key key{args.collective, algo, args.count, args.root, shape.channels, shape.ranksPerNode, slice, elem,
                  static_cast<int>(alias.kind), 0};
    const Prepared& prep = prepared(key, args, algo, shape, slice, elem, alias);
    call.buffers[2] = scratchRegion(static_cast<std::size_t>(prep.lowered.scratchCount) * elem);
    call.lowered = &prep.lowered;
    call.staging = &prep.staging;
    call.type = args.type;
    call.op = args.op;
    call.timeout = options.timeout;
    if (options.straggler.rank == rank && options.straggler.startDelay.count() > 0)
      std::this_thread::sleep_for(options.straggler.startDelay);
    executor_->run(call);
    const bool reduces = plan::reduces(args.collective) && (!plan::isRooted(args.collective) || isRoot);
    if (args.op == ReduceOp::Avg && reduces) device_->finishAvg(args.type, buffers.recv, counts.output, p);
  }

  const Prepared& prepared(const Key& key, const CollectiveArgs& args, plan::Algorithm algo, plan::PlanShape shape,
                           std::int64_t slice, std::size_t elem, const cuda::BufferAlias& alias) {
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    constexpr std::size_t kMaxCached = 64;
    if (cache_.size() >= kMaxCached) cache_.clear();
    const plan::Plan pl = plan::makePlan(args.collective, algo, nranks(), args.count, args.root, shape);
    std::vector<cuda::BufferAlias> aliases;  // every rank's, from this rank's kind (NCCL's in-place layouts)
    for (int r = 0; r < nranks(); ++r) {
      cuda::BufferAlias a{alias.kind, 0};
      if (alias.kind == cuda::BufferAlias::Kind::InputInOutput) a.offset = plan::inPlaceInputOffset(args.collective, r, args.count);
      if (alias.kind == cuda::BufferAlias::Kind::OutputInInput) a.offset = plan::inPlaceOutputOffset(args.collective, r, args.count);
      aliases.push_back(a);
    }
    Prepared prep{cuda::lowerPlan(pl, slice, aliases), {}};
    std::vector<int> nodeOf;
    for (int r = 0; r < nranks(); ++r) nodeOf.push_back(world_.node(r));
    prep.staging = cuda::planStaging(prep.lowered, nodeOf, elem);
    return cache_.emplace(key, std::move(prep)).first->second;
  }

  World world_;
  int ordinal_ = 0;
  std::unique_ptr<cuda::ProcDevice> device_;
  std::unique_ptr<GpuProcExecutor> executor_;
  CudaAwareness aware_;
  std::map<std::byte*, Allocation> allocations_;
  std::byte* scratch_ = nullptr;
  std::size_t scratchBytes_ = 0;
  std::map<Key, Prepared> cache_;
};

}  // namespace

std::unique_ptr<Communicator> makeGpuProcCommunicator(const GpuProcConfig& config) {
  if (config.ranksPerProcess != 1)
    throw InvalidArgument("cuda under mpirun: " + std::to_string(config.ranksPerProcess) +
                          " ranks per process (-g) is not built yet; start one process per rank (one process per virtual rank on a shared GPU works)");
  if (!config.makeDevice) throw InvalidArgument("cuda under mpirun: no device factory");
  try {
    return std::make_unique<GpuProcCommunicator>(config);
  } catch (const std::exception& e) {  // the other processes may be waiting in the setup: end the job
    std::fprintf(stderr, "cuda under mpirun: setup failed: %s\n", e.what());
    std::fflush(stderr);
    proc::unlinkRegisteredNow();
    MPI_Abort(MPI_COMM_WORLD, 2);
    throw;
  }
}

long long stagedMessagesSent(const Communicator& comm) {
  const auto* c = dynamic_cast<const GpuProcCommunicator*>(&comm);
  return c ? c->staged() : -1;
}

}  // namespace cclab::mpi
