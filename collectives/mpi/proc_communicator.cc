#include "collectives/mpi/proc_communicator.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <tuple>
#include <vector>

#include "collectives/host/host_communicator.h"
#include "collectives/host/ll_path.h"
#include "collectives/mpi/mpi_executor.h"
#include "collectives/mpi/mpi_links.h"
#include "collectives/mpi/mpi_world.h"
#include "collectives/proc/shm_executor.h"
#include "collectives/proc/stale_sweep.h"

namespace cclab::mpi {
namespace {

constexpr std::size_t kDefaultShmBytes = std::size_t{1} << 30;
constexpr std::size_t kAlign = 4096;

std::size_t roundUp(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

std::size_t segmentBytes(std::size_t requested, int ranksOnNode) {
  std::size_t bytes = requested;
  if (bytes == 0) {
    const char* env = std::getenv("CCLAB_PROC_SHM_BYTES");
    bytes = env ? static_cast<std::size_t>(std::strtoull(env, nullptr, 10)) : kDefaultShmBytes;
    struct statvfs fs {};
    if (statvfs("/dev/shm", &fs) == 0) {  // leave room for every rank's segment and the control segment
      const std::size_t freeBytes = static_cast<std::size_t>(fs.f_bavail) * fs.f_frsize;
      bytes = std::min(bytes, freeBytes / static_cast<std::size_t>(ranksOnNode + 1));
    }
  }
  return std::max<std::size_t>(roundUp(bytes, 2 * kAlign), 2 * kAlign);
}

class ProcCommunicator final : public Communicator {
 public:
  explicit ProcCommunicator(const ProcConfig& c) : world_(c.ranksPerNode), channels_(c.channels) {
    if (c.ranksPerProcess != 1)
      throw InvalidArgument("proc: " + std::to_string(c.ranksPerProcess) +
                            " ranks per process (-g); the process backend runs one rank per process: start more processes");
    if (c.channels < 1 || c.channels > plan::kMaxChannels)
      throw InvalidArgument("proc: channels must be 1.." + std::to_string(plan::kMaxChannels));
    const char* transport = std::getenv("CCLAB_PROC_TRANSPORT");  // "mpi": every pair over MPI (to compare)
    if (transport && std::string(transport) != "mpi" && std::string(transport) != "shm")
      throw InvalidArgument("proc: CCLAB_PROC_TRANSPORT is 'shm' (shared memory within a node, the default) or 'mpi'");
    if (transport && std::string(transport) == "mpi") {
      mpi_ = std::make_unique<MpiExecutor>(world_);
      return;
    }
    // One ShmExecutor per node (its own control segment, named by job and node); ranks off the node
    // are reached through MPI links.
    proc::NodeRanks node;
    node.jobRanks = world_.size();
    for (int r = 0; r < world_.size(); ++r)
      if (world_.node(r) == world_.node(world_.rank())) node.ranks.push_back(r);
    if (world_.nodes() > 1) links_ = std::make_unique<MpiLinks>(world_);
    // Segments of an earlier job whose creator died while joining (a live creator's are never touched);
    // this job's own names go once every rank has joined (ShmExecutor), so a later SIGKILL leaves none.
    if (node.ranks.front() == world_.rank()) proc::cleanupStaleSegments("");
    const std::size_t bytes = segmentBytes(c.shmBytes, world_.size());
    shm_ = std::make_unique<proc::ShmExecutor>(world_.jobId() + "n" + std::to_string(world_.node(world_.rank())), world_.rank(),
                                               node, bytes, std::chrono::seconds(60), links_.get());
    workBytes_ = bytes / 2;
    arenaNext_ = workBytes_;
    // The host backend's rule: busy waits only while every rank of the node has a core of its own
    // (asked once: hardware_concurrency reads /sys on every call).
    oversubscribed_ = node.ranks.size() > std::max(1U, std::thread::hardware_concurrency());
  }

  Backend backend() const override { return Backend::Proc; }
  int nranks() const override { return world_.size(); }
  std::vector<int> localRanks() const override { return {world_.rank()}; }
  std::string description() const override {
    std::string d = "proc: " + std::to_string(nranks()) + " ranks as processes on " + std::to_string(world_.nodes()) +
                    (world_.emulatedNodes() ? " emulated" : "") + (world_.nodes() == 1 ? " node" : " nodes");
    d += !shm_ ? " (MPI point-to-point for every pair)"
         : links_ ? " (shared memory within a node, MPI between nodes)" : " (shared memory)";
    return d + ", " + std::to_string(std::thread::hardware_concurrency()) + " cores";
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

  void run(int rank, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) override {
    if (rank != world_.rank())
      throw InvalidArgument("proc: this process is rank " + std::to_string(world_.rank()) + ", not rank " + std::to_string(rank));
    try {
      runRank(args, buffers, options);
    } catch (const TimeoutError& e) {  // the others may be waiting for this rank: end the job
      std::fprintf(stderr, "%s\n", e.what());
      std::fflush(stderr);
      world_.abort(3);
    }
  }
  void runGroup(const CollectiveArgs& args, std::span<const RankBuffers> buffers, const CollectiveOptions& options) override {
    if (buffers.size() != 1)
      throw InvalidArgument("proc: runGroup needs this process's one buffer pair, got " + std::to_string(buffers.size()));
    run(world_.rank(), args, buffers[0], options);
  }

  Buffer allocate(int rank, std::size_t bytes) override {
    checkRank(rank);
    if (shm_ && arenaNext_ + roundUp(bytes, kAlign) <= shm_->bufferBytes()) {  // in the shared segment
      std::byte* p = shm_->buffer() + arenaNext_;
      arenaNext_ += roundUp(std::max<std::size_t>(bytes, 1), kAlign);
      ++arenaLive_;
      return Buffer(p, bytes, [this](void*) {
        if (--arenaLive_ == 0) arenaNext_ = workBytes_;  // a bump arena: reset when all are freed
      });
    }
    return host::allocateHostBuffer(bytes, kAlign, "proc");
  }
  void copyToRank(int rank, void* dst, const void* src, std::size_t bytes) override {
    checkRank(rank);
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void copyFromRank(int rank, void* dst, const void* src, std::size_t bytes) override {
    checkRank(rank);
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void zeroOnRank(int rank, void* dst, std::size_t bytes) override {
    checkRank(rank);
    if (bytes) std::memset(dst, 0, bytes);
  }

 private:
  using PlanKey = std::tuple<plan::Collective, plan::Algorithm, std::int64_t, int, int, int>;

  void checkRank(int rank) const {
    if (rank != world_.rank())
      throw InvalidArgument("proc: rank " + std::to_string(rank) + " is not this process's (" + std::to_string(world_.rank()) + ")");
  }

  // The plan's shape: the call's channels (else the communicator's) and ranks per node (else the
  // job's nodes, when they are uniform blocks).
  // A cached plan and, per element size (1..8 bytes), whether it fits the LL rings (-1: not asked yet).
  struct Cached {
    plan::Plan plan;
    std::array<std::int8_t, 9> llFits;
  };
  Cached& planFor(const CollectiveArgs& a, plan::Algorithm algo, const CollectiveOptions& o) {
    const plan::PlanShape shape{o.channels > 0 ? o.channels : channels_,
                                o.ranksPerNode > 0 ? o.ranksPerNode : world_.ranksPerNode()};
    const PlanKey key{a.collective, algo, a.count, a.root, shape.channels, shape.ranksPerNode};
    if (last_ && key == lastKey_) return *last_;  // a loop of identical calls skips the map
    auto it = plans_.find(key);
    if (it == plans_.end()) {
      constexpr std::size_t kMaxCachedPlans = 256;
      if (plans_.size() >= kMaxCachedPlans) {
        plans_.clear();
        last_ = nullptr;
      }
      Cached c{plan::makePlan(a.collective, algo, nranks(), a.count, a.root, shape), {}};
      c.llFits.fill(-1);
      it = plans_.emplace(key, std::move(c)).first;
    }
    lastKey_ = key;
    last_ = &it->second;
    return it->second;
  }

  // Whether the call runs on the LL rings: one node, its largest buffer at most the LL threshold
  // (kProcLlDefaultMaxBytes, or CCLAB_LL_MAX_BYTES), and the plan fits. Depends on the call only, so
  // every rank takes the same path.
  bool onLl(Cached& c, std::size_t elem, std::size_t largestBytes) {
    if (!shm_ || links_ || largestBytes > llMaxBytes_ || elem >= c.llFits.size()) return false;
    auto& fits = c.llFits[elem];
    if (fits < 0) fits = shm_->llFits(c.plan, elem) ? 1 : 0;
    return fits == 1;
  }

  bool inSegment(const void* p, std::size_t bytes) const {
    const auto* b = static_cast<const std::byte*>(p);
    return shm_ && b >= shm_->buffer() && b + bytes <= shm_->buffer() + shm_->bufferBytes();
  }

  void runRank(const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) {
    const int rank = world_.rank();
    const plan::Algorithm algo = resolve(args, options.algorithm);
    checkArgs(args, nranks(), algo);
    checkShape(options, nranks(), algo);
    checkSlicing(args, nranks(), options.sliceBytes, host::kDefaultSliceBytes);
    Cached& cached = planFor(args, algo, options);
    const plan::Plan& pl = cached.plan;
    const std::size_t elem = sizeOf(args.type);
    const plan::BufferCounts counts = plan::bufferCounts(args.collective, nranks(), args.count);
    const std::size_t inBytes = static_cast<std::size_t>(counts.input) * elem;
    const std::size_t outBytes = static_cast<std::size_t>(counts.output) * elem;
    const std::size_t scratchBytes = static_cast<std::size_t>(pl.scratchCount) * elem;
    const bool isRoot = rank == args.root;
    const bool needOutput = args.collective != plan::Collective::Reduce || isRoot;
    if ((inBytes > 0 && !buffers.send) || (needOutput && outBytes > 0 && !buffers.recv))
      throw InvalidArgument("proc: rank " + std::to_string(rank) + " passed a null buffer");
    if (options.straggler.rank == rank && options.straggler.startDelay.count() > 0)
      std::this_thread::sleep_for(options.straggler.startDelay);
    const std::size_t slice = options.sliceBytes ? options.sliceBytes : host::kDefaultSliceBytes;
    const auto sliceElems = static_cast<std::int64_t>(std::max<std::size_t>(1, slice / elem));
    const ReduceFn reduce = hostReduceFn(args.type, args.op);
    if (onLl(cached, elem, std::max(inBytes, outBytes)))
      runLl(pl, buffers, scratchBytes, elem, reduce, options);
    else if (shm_)
      runShared(pl, buffers, inBytes, outBytes, scratchBytes, elem, reduce, sliceElems, options);
    else
      runMpi(pl, buffers, scratchBytes, elem, reduce, sliceElems, options);
    const bool reduces = plan::reduces(args.collective) && (!plan::isRooted(args.collective) || isRoot);
    if (args.op == ReduceOp::Avg && reduces) finishAvg(buffers.recv, static_cast<std::size_t>(counts.output), args.type, nranks());
  }

  void runShared(const plan::Plan& pl, RankBuffers buffers, std::size_t inBytes, std::size_t outBytes, std::size_t scratchBytes,
                 std::size_t elem, ReduceFn reduce, std::int64_t sliceElems, const CollectiveOptions& options) {
    std::byte* base = shm_->buffer();
    const bool direct = inSegment(buffers.send, inBytes) && inSegment(buffers.recv, outBytes);
    const std::size_t staged = direct ? 0 : roundUp(inBytes, kAlign) + roundUp(outBytes, kAlign);
    if (staged + scratchBytes > workBytes_)
      throw InvalidArgument("proc: a call needing " + std::to_string(staged + scratchBytes) + " bytes of staging and scratch " +
                            "does not fit this rank's shared segment (" + std::to_string(workBytes_) +
                            " bytes for them; set CCLAB_PROC_SHM_BYTES, or use buffers from allocate())");
    proc::ShmLayout layout;
    if (direct) {
      layout.input = buffers.send ? static_cast<std::size_t>(static_cast<const std::byte*>(buffers.send) - base) : 0;
      layout.output = buffers.recv ? static_cast<std::size_t>(static_cast<std::byte*>(buffers.recv) - base) : 0;
    } else {  // a copy in, a copy out (exact for in place too: all input is read before any output is written)
      layout.input = 0;
      layout.output = roundUp(inBytes, kAlign);
      if (inBytes) std::memcpy(base + layout.input, buffers.send, inBytes);
    }
    layout.scratch = staged;
    proc::ShmRunOptions o;
    o.elemSize = elem;
    o.reduce = reduce;
    o.sliceElems = sliceElems;
    o.timeout = options.timeout;
    if (oversubscribed_) o.spin = std::chrono::nanoseconds(0);
    shm_->run(pl, layout, o);
    if (!direct && outBytes && buffers.recv) std::memcpy(buffers.recv, base + layout.output, outBytes);
  }

  // On the LL rings: straight from and to the caller's buffers (LL copies into its lines anyway).
  void runLl(const plan::Plan& pl, RankBuffers buffers, std::size_t scratchBytes, std::size_t elem, ReduceFn reduce,
             const CollectiveOptions& options) {
    if (scratch_.size() < scratchBytes) scratch_.resize(scratchBytes);
    proc::ShmRunOptions o;
    o.elemSize = elem;
    o.reduce = reduce;
    o.timeout = options.timeout;
    if (oversubscribed_) o.spin = std::chrono::nanoseconds(0);
    shm_->runLl(pl, {static_cast<const std::byte*>(buffers.send), static_cast<std::byte*>(buffers.recv), scratch_.data()}, o);
  }

  void runMpi(const plan::Plan& pl, RankBuffers buffers, std::size_t scratchBytes, std::size_t elem, ReduceFn reduce,
              std::int64_t sliceElems, const CollectiveOptions& options) {
    if (scratch_.size() < scratchBytes) scratch_.resize(scratchBytes);
    MpiRunOptions o;
    o.elemSize = elem;
    o.reduce = reduce;
    o.sliceElems = sliceElems;
    o.timeout = options.timeout;
    mpi_->run(pl, {static_cast<const std::byte*>(buffers.send), static_cast<std::byte*>(buffers.recv), scratch_.data()}, o);
  }

  World world_;
  int channels_;
  std::unique_ptr<MpiLinks> links_;  // before shm_, which holds a pointer to it
  std::unique_ptr<proc::ShmExecutor> shm_;
  std::unique_ptr<MpiExecutor> mpi_;
  bool oversubscribed_ = false;  // more ranks on this node than cores
  std::size_t workBytes_ = 0;   // [0, workBytes_): staging and scratch; above: the allocate() arena
  std::size_t arenaNext_ = 0;
  int arenaLive_ = 0;
  std::vector<std::byte> scratch_;
  std::map<PlanKey, Cached> plans_;  // node-stable: last_ stays valid until the map is cleared
  PlanKey lastKey_{};
  Cached* last_ = nullptr;
  std::size_t llMaxBytes_ = host::llMaxBytesFromEnvironment(kProcLlDefaultMaxBytes);
};

}  // namespace

std::unique_ptr<Communicator> makeProcCommunicator(const ProcConfig& config) {
  return std::make_unique<ProcCommunicator>(config);
}

}  // namespace cclab::mpi
