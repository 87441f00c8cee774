#include "collectives/proc/proc_communicator.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "collectives/call/planned_call.h"
#include "collectives/host/host_communicator.h"
#include "collectives/host/ll_path.h"
#include "collectives/host/worker_pool.h"
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

// The segment asked for (0: kDefaultShmBytes), at most /dev/shm's free share.
std::size_t segmentBytes(std::size_t requested, int ranksOnNode) {
  std::size_t bytes = requested == 0 ? kDefaultShmBytes : requested;
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) == 0) {  // leave room for every rank's segment and the control segment
    const std::size_t freeBytes = static_cast<std::size_t>(fs.f_bavail) * fs.f_frsize;
    bytes = std::min(bytes, freeBytes / static_cast<std::size_t>(ranksOnNode + 1));
  }
  return std::max<std::size_t>(roundUp(bytes, 2 * kAlign), 2 * kAlign);
}

class ProcCommunicator final : public Communicator {
 public:
  // ranksPerNode counts ranks; the World counts processes (K ranks each).
  explicit ProcCommunicator(const ProcConfig& c) : k_(checkedRanksPerProcess(c)), world_(c.ranksPerNode / k_), channels_(c.channels), llMaxBytes_(c.llMaxBytes) {
    if (c.channels < 1 || c.channels > plan::kMaxChannels)
      throw InvalidArgument("proc: channels must be 1.." + std::to_string(plan::kMaxChannels));
    const bool overMpi = c.overMpi;
    if (k_ > 1 && overMpi)
      throw InvalidArgument("proc: CCLAB_PROC_TRANSPORT=mpi runs one rank per process; -g " + std::to_string(k_) +
                            " ranks per process use shared memory within a node");
    if (k_ > 1 && world_.nodes() > 1) {  // the links' tags carry (channel, sender's k, receiver's k)
      void* value = nullptr;
      int found = 0;
      check(MPI_Comm_get_attr(world_.comm(), MPI_TAG_UB, &value, &found), "MPI_Comm_get_attr(MPI_TAG_UB)");
      const long long tagUb = found ? *static_cast<int*>(value) : 32767;
      if (MpiLinks::maxTag(k_) > tagUb)
        throw InvalidArgument("proc: -g " + std::to_string(k_) + " across nodes needs MPI tags up to " +
                              std::to_string(MpiLinks::maxTag(k_)) + ", this MPI allows " + std::to_string(tagUb));
    }
    for (int k = 0; k < k_; ++k) ranks_.push_back(std::make_unique<RankState>());
    // One control segment per node (named by job and node); every rank of the node (K per process)
    // has its own ShmExecutor and buffer segment; ranks off the node are reached through MPI links.
    proc::NodeRanks node;
    node.jobRanks = nranks();
    const int myNode = world_.node(world_.rank());
    for (int p = 0; p < world_.size(); ++p)
      if (world_.node(p) == myNode)
        for (int k = 0; k < k_; ++k) node.ranks.push_back(p * k_ + k);
    if (world_.nodes() > 1)  // one set of links per rank; K > 1: MPI one thread at a time (SERIALIZED)
      for (int k = 0; k < k_; ++k) links_.push_back(std::make_unique<MpiLinks>(world_, k_, k, k_ > 1 ? &mpiMutex_ : nullptr));
    // Segments of an earlier job whose creator died while joining (a live creator's are never touched);
    // this job's own names go once every rank has joined (ShmExecutor), so a later SIGKILL leaves none.
    if (node.ranks.front() == globalRank(0)) proc::cleanupStaleSegments("");
    if (overMpi) {
      // Every slice over MPI; the node's control segment only carries whom each rank waits for, so a
      // timeout blames as the shared-memory transport does (mpi_executor.h). Its buffers go unused.
      waits_ = std::make_unique<proc::ShmNode>(world_.jobId() + "w" + std::to_string(myNode), globalRank(0), node, kAlign,
                                               std::chrono::seconds(60), linksOf(0), 0);
      mpi_ = std::make_unique<MpiExecutor>(world_, waits_.get());
      return;
    }
    const std::size_t bytes = segmentBytes(c.shmBytes, nranks());
    // Joining waits for every rank of the node, so this process's K ranks join at once, from K threads.
    const std::string job = world_.jobId() + "n" + std::to_string(myNode);
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(k_));
    auto join = [&](int k) {
      try {
        ranks_[static_cast<std::size_t>(k)]->shm =
            std::make_unique<proc::ShmExecutor>(job, globalRank(k), node, bytes, std::chrono::seconds(60),
                                                linksOf(k));
      } catch (...) {
        errors[static_cast<std::size_t>(k)] = std::current_exception();
      }
    };
    {
      std::vector<std::jthread> joiners;
      for (int k = 1; k < k_; ++k) joiners.emplace_back(join, k);
      join(0);
    }
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
    workBytes_ = bytes / 2;
    for (auto& st : ranks_) st->arenaNext = workBytes_;
    // The host backend's rule: busy waits only while every rank of the node has a core of its own
    // (asked once: hardware_concurrency reads /sys on every call).
    oversubscribed_ = node.ranks.size() > std::max(1U, std::thread::hardware_concurrency());
    if (k_ > 1)  // group calls: local rank 0 on the calling thread, the others on persistent workers
      pool_ = std::make_unique<host::WorkerPool>(
          k_, [this](int k) { runLocal(k, *job_.args, job_.buffers[static_cast<std::size_t>(k)], *job_.options); },
          oversubscribed_ ? std::chrono::nanoseconds(0) : std::chrono::nanoseconds(std::chrono::microseconds(50)));
  }

  Backend backend() const override { return Backend::Proc; }
  int nranks() const override { return world_.size() * k_; }
  std::vector<int> localRanks() const override {
    std::vector<int> r;
    for (int k = 0; k < k_; ++k) r.push_back(globalRank(k));
    return r;
  }
  std::string description() const override {
    const std::string ranks = k_ == 1 ? " ranks as processes on "
                                      : " ranks as " + std::to_string(world_.size()) + " processes of " + std::to_string(k_) + " threads on ";
    std::string d = "proc: " + std::to_string(nranks()) + ranks + std::to_string(world_.nodes()) +
                    (world_.emulatedNodes() ? " emulated" : "") + (world_.nodes() == 1 ? " node" : " nodes");
    d += !ranks_.front()->shm ? " (MPI point-to-point for every pair)"
         : !links_.empty() ? " (shared memory within a node, MPI between nodes)" : " (shared memory)";
    return d + ", " + std::to_string(std::thread::hardware_concurrency()) + " cores";
  }
  std::vector<std::string> rankLocations() const override {
    std::vector<std::string> where;
    for (int r = 0; r < nranks(); ++r) {
      const Peer& p = world_.peers()[static_cast<std::size_t>(r / k_)];
      where.push_back("pid " + std::to_string(p.pid) + " on " + p.host + " node " + std::to_string(p.node) +
                      (k_ > 1 ? " thread " + std::to_string(r % k_) : std::string()));
    }
    return where;
  }
  double maxOverProcesses(double v) const override { return world_.maxOf(v); }
  std::int64_t sumOverProcesses(std::int64_t v) const override { return world_.sumOf(v); }
  bool printsReport() const override { return world_.rank() == 0; }
  // A call's buffers are either in the arena (the upper half) or staged in the lower half with its
  // scratch (runShared), so no buffer beyond half the segment can ever run. MPI alone: no bound.
  std::optional<std::size_t> maxBufferBytes() const override {
    if (!ranks_.front()->shm) return std::nullopt;
    return workBytes_;
  }

  // From one thread per rank too (each of this process's ranks its own), like the host backend's.
  void run(int rank, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) override {
    runLocal(localIndex(rank), args, buffers, options);
  }
  void runGroup(const CollectiveArgs& args, std::span<const RankBuffers> buffers, const CollectiveOptions& options) override {
    if (static_cast<int>(buffers.size()) != k_)
      throw InvalidArgument("proc: runGroup needs this process's " + std::to_string(k_) + " buffer pair" + (k_ == 1 ? "" : "s") +
                            ", got " + std::to_string(buffers.size()));
    if (k_ == 1) {
      runLocal(0, args, buffers[0], options);
      return;
    }
    job_ = {&args, buffers, &options};
    pool_->runAll();  // every rank's waits are bounded (options.timeout), and a timeout ends the job
  }

  Buffer allocate(int rank, std::size_t bytes) override {
    RankState& st = *ranks_[static_cast<std::size_t>(localIndex(rank))];
    if (st.shm && st.arenaNext + roundUp(bytes, kAlign) <= st.shm->bufferBytes()) {  // in the rank's shared segment
      std::byte* p = st.shm->buffer() + st.arenaNext;
      st.arenaNext += roundUp(std::max<std::size_t>(bytes, 1), kAlign);
      ++st.arenaLive;
      return Buffer(p, bytes, [this, s = &st](void*) {
        if (--s->arenaLive == 0) s->arenaNext = workBytes_;  // a bump arena: reset when all are freed
      });
    }
    return host::allocateHostBuffer(bytes, kAlign, "proc");
  }
  void copyToRank(int rank, void* dst, const void* src, std::size_t bytes) override {
    (void)localIndex(rank);
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void copyFromRank(int rank, void* dst, const void* src, std::size_t bytes) override {
    (void)localIndex(rank);
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void zeroOnRank(int rank, void* dst, std::size_t bytes) override {
    (void)localIndex(rank);
    if (bytes) std::memset(dst, 0, bytes);
  }

 private:
  static int checkedRanksPerProcess(const ProcConfig& c) {
    if (c.ranksPerProcess < 1 || c.ranksPerProcess > kMaxProcRanksPerProcess)
      throw InvalidArgument("proc: -g " + std::to_string(c.ranksPerProcess) + " ranks per process; 1.." +
                            std::to_string(kMaxProcRanksPerProcess));
    if (c.ranksPerNode % c.ranksPerProcess != 0)
      throw InvalidArgument("proc: ranks per node (" + std::to_string(c.ranksPerNode) + ") must be a multiple of the ranks per process (" +
                            std::to_string(c.ranksPerProcess) + ")");
    return c.ranksPerProcess;
  }
  [[nodiscard]] int globalRank(int k) const { return world_.rank() * k_ + k; }
  [[nodiscard]] MpiLinks* linksOf(int k) const { return links_.empty() ? nullptr : links_[static_cast<std::size_t>(k)].get(); }
  // Rank's index among this process's ranks; InvalidArgument for another process's rank.
  [[nodiscard]] int localIndex(int rank) const {
    const int k = rank - world_.rank() * k_;
    if (k < 0 || k >= k_)
      throw InvalidArgument("proc: rank " + std::to_string(rank) + " is not this process's (" + std::to_string(globalRank(0)) +
                            (k_ > 1 ? ".." + std::to_string(globalRank(k_ - 1)) : std::string()) + ")");
    return k;
  }

  // Runs local rank k's part of a call. A timeout ends the job: the others may be waiting for this rank
  // (the first of this process's ranks to time out prints its line; MPI_Abort ends the rest).
  void runLocal(int k, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) {
    try {
      runRank(k, args, buffers, options);
    } catch (const TimeoutError& e) {
      const std::lock_guard<std::mutex> lock(abortMutex_);  // one line, one MPI_Abort
      std::fprintf(stderr, "%s\n", e.what());
      std::fflush(stderr);
      const std::lock_guard<std::mutex> mpi(mpiMutex_);  // no other rank thread in MPI (SERIALIZED)
      world_.abort(3);
    }
  }

  // The plan's shape: the call's channels (else the communicator's) and ranks per node (else the
  // job's nodes, when they are uniform blocks).
  // A cached plan and, per element size (1..8 bytes), whether it fits the LL rings (-1: not asked yet).
  struct Cached {
    plan::Plan plan;
    std::array<std::int8_t, 9> llFits;
  };
  // A local rank's own state (its thread may run beside the others'): its executor, the allocate()
  // arena of its segment, its scratch and its plan cache.
  struct RankState {
    std::unique_ptr<proc::ShmExecutor> shm;
    std::size_t arenaNext = 0;  // [0, workBytes_): staging and scratch; above: the allocate() arena
    int arenaLive = 0;
    std::vector<std::byte> scratch;
    PlanCache<Cached> plans;
  };

  // Whether the call runs on the LL rings: one node, its largest buffer at most the LL threshold
  // (kProcLlDefaultMaxBytes, or CCLAB_LL_MAX_BYTES), and the plan fits. Depends on the call only, so
  // every rank takes the same path.
  bool onLl(const RankState& st, Cached& c, std::size_t elem, std::size_t largestBytes) const {
    if (!st.shm || !links_.empty() || largestBytes > llMaxBytes_ || elem >= c.llFits.size()) return false;
    auto& fits = c.llFits[elem];
    if (fits < 0) fits = st.shm->llFits(c.plan, elem) ? 1 : 0;
    return fits == 1;
  }

  static bool inSegment(const RankState& st, const void* p, std::size_t bytes) {
    const auto* b = static_cast<const std::byte*>(p);
    return st.shm && b >= st.shm->buffer() && b + bytes <= st.shm->buffer() + st.shm->bufferBytes();
  }

  void runRank(int k, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) {
    const int rank = globalRank(k);
    RankState& st = *ranks_[static_cast<std::size_t>(k)];
    const PlannedCall call(*this, args, options, host::kDefaultSliceBytes);
    const plan::PlanShape shape = call.shape(options, channels_, world_.ranksPerNode() * k_);
    Cached& cached = st.plans.get(planKey(args, call.algorithm(), shape), [&] {
      Cached c{call.makePlan(shape), {}};
      c.llFits.fill(-1);
      return c;
    });
    const plan::Plan& pl = cached.plan;
    const std::size_t scratchBytes = static_cast<std::size_t>(pl.scratchCount) * call.elemSize();
    call.checkBuffers("proc", rank, buffers);
    if (options.straggler.rank == rank && options.straggler.startDelay.count() > 0)
      std::this_thread::sleep_for(options.straggler.startDelay);
    RunOptions ro = call.runOptions(options, rank);
    ro.startDelay = {};  // slept above, on every path
    if (onLl(st, cached, call.elemSize(), std::max(call.inputBytes(), call.outputBytes())))
      runLl(st, pl, buffers, scratchBytes, ro);
    else if (st.shm)
      runShared(st, pl, buffers, call.inputBytes(), call.outputBytes(), scratchBytes, ro);
    else
      runMpi(st, pl, buffers, scratchBytes, ro);
    call.finishAvgOnHost(rank, buffers.recv);
  }

  void runShared(RankState& st, const plan::Plan& pl, RankBuffers buffers, std::size_t inBytes, std::size_t outBytes,
                 std::size_t scratchBytes, RunOptions ro) {
    std::byte* base = st.shm->buffer();
    const bool direct = inSegment(st, buffers.send, inBytes) && inSegment(st, buffers.recv, outBytes);
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
    if (oversubscribed_) ro.spin = std::chrono::nanoseconds(0);
    st.shm->run(pl, layout, ro);
    if (!direct && outBytes && buffers.recv) std::memcpy(buffers.recv, base + layout.output, outBytes);
  }

  // On the LL rings: straight from and to the caller's buffers (LL copies into its lines anyway).
  void runLl(RankState& st, const plan::Plan& pl, RankBuffers buffers, std::size_t scratchBytes, RunOptions ro) {
    if (st.scratch.size() < scratchBytes) st.scratch.resize(scratchBytes);
    ro.sliceElems = 0;  // LL moves whole ops
    if (oversubscribed_) ro.spin = std::chrono::nanoseconds(0);
    st.shm->runLl(pl, {static_cast<const std::byte*>(buffers.send), static_cast<std::byte*>(buffers.recv), st.scratch.data()}, ro);
  }

  void runMpi(RankState& st, const plan::Plan& pl, RankBuffers buffers, std::size_t scratchBytes, const RunOptions& ro) {
    if (st.scratch.size() < scratchBytes) st.scratch.resize(scratchBytes);
    mpi_->run(pl, {static_cast<const std::byte*>(buffers.send), static_cast<std::byte*>(buffers.recv), st.scratch.data()}, ro);
  }

  int k_;  // ranks per process (-g): threads of this process, global ranks world_.rank() * k_ + k
  World world_;
  int channels_;
  std::mutex mpiMutex_;  // K > 1 between nodes: the rank threads' MPI calls, one at a time
  std::vector<std::unique_ptr<MpiLinks>> links_;  // per local rank (several nodes); before ranks_, whose executors point to them
  std::vector<std::unique_ptr<RankState>> ranks_;  // per local rank k
  std::unique_ptr<proc::ShmNode> waits_;  // CCLAB_PROC_TRANSPORT=mpi: the node's published waits, before mpi_ (which points to it)
  std::unique_ptr<MpiExecutor> mpi_;
  bool oversubscribed_ = false;  // more ranks on this node than cores
  std::size_t workBytes_ = 0;    // per rank segment: [0, workBytes_) staging and scratch, above the arena
  std::size_t llMaxBytes_;
  // The current group call (runGroup with K > 1), read by the pool's workers.
  struct GroupJob {
    const CollectiveArgs* args = nullptr;
    std::span<const RankBuffers> buffers;
    const CollectiveOptions* options = nullptr;
  } job_;
  std::unique_ptr<host::WorkerPool> pool_;  // last: its workers stop before the rest goes
  std::mutex abortMutex_;
};

}  // namespace

std::unique_ptr<Communicator> makeProcCommunicator(const ProcConfig& config) {
  return std::make_unique<ProcCommunicator>(config);
}

}  // namespace cclab::mpi
