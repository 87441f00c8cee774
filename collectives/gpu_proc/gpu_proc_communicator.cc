#include "collectives/gpu_proc/gpu_proc_communicator.h"

#include <cstdio>
#include <map>
#include <tuple>
#include <thread>

#include "collectives/call/planned_call.h"
#include "collectives/cuda/buffer_alias.h"
#include "collectives/cuda/lowering.h"
#include "collectives/gpu_proc/proc_device_map.h"
#include "collectives/cuda/slicing.h"
#include "collectives/gpu_proc/staging_plan.h"
#include "collectives/gpu_proc/gpu_proc_executor.h"
#include "collectives/mpi/mpi_world.h"
#include "collectives/gpu_proc/node_exchange.h"
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
  const cuda::ProcDeviceMap map(std::move(placements), c.ranksPerProcess);
  ordinal = map.deviceOfProcess(world.rank());
  return c.makeDevice(ordinal);
}

class GpuProcCommunicator final : public Communicator {
 public:
  // ranksPerNode counts ranks; the World counts processes (K ranks each).
  explicit GpuProcCommunicator(const GpuProcConfig& c) : k_(c.ranksPerProcess), world_(c.ranksPerNode / c.ranksPerProcess) {
    device_ = deviceFor(world_, c, ordinal_);
    executor_ = std::make_unique<GpuProcExecutor>(world_, k_, *device_, kSetupTimeout);
    aware_ = cudaAwareMpi();
  }

  Backend backend() const override { return Backend::Cuda; }
  int nranks() const override { return world_.size() * k_; }
  std::vector<int> localRanks() const override {
    std::vector<int> r;
    for (int i = 0; i < k_; ++i) r.push_back(world_.rank() * k_ + i);
    return r;
  }
  std::string description() const override {
    const std::string ranks = k_ == 1 ? " ranks as processes on "
                                      : " ranks as " + std::to_string(world_.size()) + " processes of " + std::to_string(k_) + " on ";
    return "cuda: " + std::to_string(nranks()) + ranks + std::to_string(world_.nodes()) +
           (world_.emulatedNodes() ? " emulated" : "") + (world_.nodes() == 1 ? " node" : " nodes") + ", rank 0 on " +
           device_->describe() + " (CUDA IPC within a node, pinned staging + MPI between nodes; " + aware_.text +
           "), order=host-driven";
  }
  std::vector<std::string> rankLocations() const override {
    std::vector<std::string> where;
    for (int r = 0; r < nranks(); ++r) {
      const Peer& p = world_.peers()[static_cast<std::size_t>(r / k_)];
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
    if (k_ > 1)  // K threads would call MPI (initialized FUNNELED: only the main thread may)
      throw InvalidArgument("cuda under mpirun: with " + std::to_string(k_) +
                            " ranks per process, call runGroup with all of this process's ranks (per-rank calls are one rank per process)");
    runRanks(args, std::span<const RankBuffers>(&buffers, 1), options);
  }
  void runGroup(const CollectiveArgs& args, std::span<const RankBuffers> buffers, const CollectiveOptions& options) override {
    if (static_cast<int>(buffers.size()) != k_)
      throw InvalidArgument("cuda proc: runGroup needs this process's " + std::to_string(k_) + " buffer pairs, got " +
                            std::to_string(buffers.size()));
    runRanks(args, buffers, options);
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

  void runRanks(const CollectiveArgs& args, std::span<const RankBuffers> buffers, const CollectiveOptions& options) {
    try {
      runLocal(args, buffers, options);
    } catch (const TimeoutError& e) {  // peers may be waiting for this rank: end the job
      std::fprintf(stderr, "%s\n", e.what());
      std::fflush(stderr);
      proc::unlinkRegisteredNow();  // MPI_Abort runs no destructors; the others' are swept (stale sweep)
      world_.abort(3);
    }
  }
  void checkRank(int rank) const {
    if (rank / k_ != world_.rank() || rank < 0)
      throw InvalidArgument("cuda proc: rank " + std::to_string(rank) + " is not one of this process's (" +
                            std::to_string(world_.rank() * k_) + ".." + std::to_string(world_.rank() * k_ + k_ - 1) + ")");
  }

  // The region of [p, p + bytes) in an allocation from allocate(); refuses other memory.
  DeviceRegion regionOf(int rank, const void* p, std::size_t bytes, const char* what) const {
    DeviceRegion r;
    if (bytes == 0 || p == nullptr) return r;
    const auto* b = static_cast<const std::byte*>(p);
    auto it = allocations_.upper_bound(const_cast<std::byte*>(b));
    if (it == allocations_.begin() || b + bytes > std::prev(it)->first + std::prev(it)->second.bytes)
      throw InvalidArgument("cuda proc: rank " + std::to_string(rank) + "'s " + what +
                            " buffer is not memory from allocate() (peers import it by CUDA IPC handle)");
    --it;
    r.base = it->first;
    r.handle = it->second.handle;
    r.offset = static_cast<std::uint64_t>(b - it->first);
    r.bytes = bytes;
    return r;
  }

  // Scratch for every local rank in one allocation (rank k's part at k * per), grown as calls need.
  DeviceRegion scratchRegion(int local, std::size_t bytes) {
    constexpr std::size_t kAlign = 256;
    const std::size_t per = (bytes + kAlign - 1) / kAlign * kAlign;
    if (per * static_cast<std::size_t>(k_) > scratchBytes_) {
      if (scratch_) {
        allocations_.erase(scratch_);
        device_->release(scratch_);
        scratch_ = nullptr;
        scratchBytes_ = 0;
      }
      scratchBytes_ = per * static_cast<std::size_t>(k_);
      scratch_ = static_cast<std::byte*>(device_->allocate(scratchBytes_));
      allocations_[scratch_] = {scratchBytes_, device_->exportMemory(scratch_)};
    }
    return bytes ? regionOf(world_.rank() * k_ + local, scratch_ + per * static_cast<std::size_t>(local), bytes, "scratch")
                 : DeviceRegion{};
  }

  void runLocal(const CollectiveArgs& args, std::span<const RankBuffers> buffers, const CollectiveOptions& options) {
    const PlannedCall call(*this, args, options, cuda::kCrossDeviceSliceBytes);
    const std::size_t elem = call.elemSize();
    const plan::BufferCounts& counts = call.counts();
    const std::int64_t slice = cuda::sliceElemsFor(options.sliceBytes, elem, 2);
    const plan::PlanShape shape = call.shape(options, 1, world_.ranksPerNode() * k_);
    GpuProcCall run;
    cuda::BufferAlias alias;
    bool delay = false;
    for (int i = 0; i < k_; ++i) {
      const int rank = world_.rank() * k_ + i;
      const RankBuffers& b = buffers[static_cast<std::size_t>(i)];
      call.checkBuffers("cuda proc", rank, b);
      LocalRankBuffers lr;
      lr.rank = rank;
      lr.buffers[0] = regionOf(rank, b.send, call.inputBytes(), "input");
      lr.buffers[1] = regionOf(rank, b.recv, call.writesOutput(rank) ? call.outputBytes() : 0, "output");
      run.ranks.push_back(lr);
      // In place: the lowering needs to know (cuda/buffer_alias.h); every rank's alias follows this
      // process's first rank's kind (ranks pass the same layout: NCCL's rule).
      if (i == 0) alias = cuda::detectAlias(args.collective, rank, args.count, elem, b.send, b.recv, counts.input, counts.output);
      delay = delay || (options.straggler.rank == rank && options.straggler.startDelay.count() > 0);
    }
    const Key key{args.collective, call.algorithm(), args.count, args.root, shape.channels, shape.ranksPerNode, slice, elem,
                  static_cast<int>(alias.kind), 0};
    const Prepared& prep = prepared(key, call, shape, slice, elem, alias);
    for (int i = 0; i < k_; ++i)
      run.ranks[static_cast<std::size_t>(i)].buffers[2] = scratchRegion(i, static_cast<std::size_t>(prep.lowered.scratchCount) * elem);
    run.lowered = &prep.lowered;
    run.staging = &prep.staging;
    run.type = args.type;
    run.op = args.op;
    run.timeout = options.timeout;
    if (delay) std::this_thread::sleep_for(options.straggler.startDelay);  // the straggler's whole process arrives late
    executor_->run(run);
    for (int i = 0; i < k_; ++i)
      if (call.averages(world_.rank() * k_ + i))
        device_->finishAvg(args.type, buffers[static_cast<std::size_t>(i)].recv, counts.output, call.nranks());
  }

  // The lowering and staging of a call, cached (fewer entries than a plan cache: a lowering holds
  // every step of every rank).
  const Prepared& prepared(const Key& key, const PlannedCall& call, plan::PlanShape shape, std::int64_t slice,
                           std::size_t elem, const cuda::BufferAlias& alias) {
    return cache_.get(key, [&] {
      const CollectiveArgs& args = call.args();
      const plan::Plan pl = call.makePlan(shape);
      std::vector<cuda::BufferAlias> aliases;  // every rank's, from this rank's kind (NCCL's in-place layouts)
      for (int r = 0; r < nranks(); ++r) {
        cuda::BufferAlias a{alias.kind, 0};
        if (alias.kind == cuda::BufferAlias::Kind::InputInOutput) a.offset = plan::inPlaceInputOffset(args.collective, r, args.count);
        if (alias.kind == cuda::BufferAlias::Kind::OutputInInput) a.offset = plan::inPlaceOutputOffset(args.collective, r, args.count);
        aliases.push_back(a);
      }
      Prepared prep{cuda::lowerPlan(pl, slice, aliases), {}};
      std::vector<int> nodeOf;
      for (int r = 0; r < nranks(); ++r) nodeOf.push_back(world_.node(r / k_));
      prep.staging = cuda::planStaging(prep.lowered, nodeOf, elem);
      return prep;
    });
  }

  int k_;  // ranks per process
  World world_;
  int ordinal_ = 0;
  std::unique_ptr<cuda::ProcDevice> device_;
  std::unique_ptr<GpuProcExecutor> executor_;
  CudaAwareness aware_;
  std::map<std::byte*, Allocation> allocations_;
  std::byte* scratch_ = nullptr;
  std::size_t scratchBytes_ = 0;
  static constexpr std::size_t kMaxCachedLowerings = 64;
  PlanCache<Prepared, Key> cache_{kMaxCachedLowerings};
};

}  // namespace

std::unique_ptr<Communicator> makeGpuProcCommunicator(const GpuProcConfig& config) {
  if (config.ranksPerProcess < 1 || config.ranksPerProcess > GpuProcExecutor::kMaxRanksPerProcess)
    throw InvalidArgument("cuda under mpirun: -g " + std::to_string(config.ranksPerProcess) + " ranks per process; 1.." +
                          std::to_string(GpuProcExecutor::kMaxRanksPerProcess) + " are supported");
  if (config.ranksPerNode % config.ranksPerProcess != 0)
    throw InvalidArgument("cuda under mpirun: ranks per node (" + std::to_string(config.ranksPerNode) +
                          ") must be a multiple of the ranks per process (" + std::to_string(config.ranksPerProcess) + ")");
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
