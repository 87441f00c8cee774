// HostCommunicator: the Communicator of the host backend (plans cached per call shape, group calls on a WorkerPool).
#include "collectives/host/host_communicator.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "collectives/call/planned_call.h"
#include "collectives/host/host_executor.h"
#include "collectives/host/ll_path.h"
#include "collectives/host/worker_pool.h"

namespace cclab::host {
namespace {

class HostCommunicator final : public Communicator {
 public:
  HostCommunicator(int nranks, const HostConfig& config)
      : executor_(nranks), ll_(nranks, executor_.spin(), config.llMaxBytes), scratch_(static_cast<std::size_t>(nranks)),
        lowered_(std::make_unique<Lowered[]>(static_cast<std::size_t>(nranks))),
        pool_(nranks,
              [this](int r) {
                const auto i = static_cast<std::size_t>(r);
                if (!job_.llPlan) {
                  runChecked(r, *job_.call, job_.buffers[i], job_.options);
                  return;
                }
                // Each rank lowers a new job itself (in parallel) and keeps it while the job stays.
                Lowered& mine = lowered_[i];
                if (!job_.gather) {
                  if (mine.job != job_.version) {
                    mine.call = ll_.lower(r, job_.args, *job_.llPlan, job_.buffers[i], job_.options);
                    mine.job = job_.version;
                  }
                  ll_.runLowered(r, *job_.llPlan, mine.call);
                  return;
                }
                // Gathered (ll_executor.h): rank 0 folds and writes every output; the call ends when it
                // returns (runAll does not wait for the workers). A worker reads job_ only before its
                // send, and a worker that fails first ends rank 0's wait at once, not at the timeout.
                if (r == 0) {
                  if (mine.job != job_.version) {
                    mine.call = ll_.lower(0, job_.args, *job_.llPlan, job_.buffers[0], job_.options);
                    mine.job = job_.version;
                  }
                  ll_.runGatherFold(*job_.llPlan, mine.call, job_.outputs);
                  return;
                }
                try {
                  if (mine.job != job_.version) {
                    mine.call = ll_.lower(r, job_.args, *job_.llPlan, job_.buffers[i], job_.options);
                    mine.job = job_.version;
                  }
                  ll_.runGatherSend(r, *job_.llPlan, mine.call);
                } catch (const std::exception& e) {
                  ll_.executor().abort(e.what());
                  throw;
                }
              },
              executor_.spin()) {
    // More ranks than cores: small group calls run as one thread per core, each a share of the ranks
    // (ll_multi_run.cc), rather than a thread per rank that every call must schedule in and out.
    const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    if (nranks > cores && config.llShares) {
      shares_.resize(static_cast<std::size_t>(cores));
      for (int r = 0; r < nranks; ++r) shares_[static_cast<std::size_t>(r % cores)].push_back(r);
      sharePool_ = std::make_unique<WorkerPool>(
          cores,
          [this](int t) {
            ll_.runShare(shares_[static_cast<std::size_t>(t)], job_.args, *job_.llPlan, job_.buffers, job_.options, shareSpin_);
          },
          shareSpin_);
    }
    gather_ = config.llGather;
    ll_.bindRanks(config.bindRanks);
  }

  Backend backend() const override { return Backend::Host; }
  int nranks() const override { return executor_.nranks(); }
  std::string description() const override {
    return "host: " + std::to_string(nranks()) + " ranks as threads, " + std::to_string(std::thread::hardware_concurrency()) +
           " cores";
  }

  void run(int rank, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) override {
    runRank(rank, args, buffers, options);
  }

  void runGroup(const CollectiveArgs& args, std::span<const RankBuffers> buffers, const CollectiveOptions& options) override {
    if (static_cast<int>(buffers.size()) != nranks())
      throw InvalidArgument("host: runGroup needs " + std::to_string(nranks()) + " buffer pairs, got " +
                            std::to_string(buffers.size()));
    // A call equal to the last one (by value: arguments, options, every rank's buffers) reuses its
    // checks and its lowering, and writes nothing the workers read: their copy of job_ stays valid,
    // so a loop of identical small calls hands them the call with the generation word alone.
    if (!job_.valid || !sameCall(args, buffers, options)) prepare(args, buffers, options);
    // Every wait and start delay is bounded by the timeout; should the call still stall (no slice
    // moved for a whole timeout after rank 0 returned), end it naming the ranks still running
    // (watchdog_, made once: only its patience changes per call, in prepare()).
    if (job_.shares)
      sharePool_->runAll(watchdog_);
    else
      pool_.runAll(watchdog_, job_.gather);
  }

  std::optional<ArrivalStats> arrivalStats() const override {
    return mergeArrivalStats(executor_.arrivalStats(), ll_.executor().arrivalStats());
  }
  void resetArrivalStats() override {
    executor_.resetArrivals();
    ll_.executor().resetArrivals();
  }

  Buffer allocate(int rank, std::size_t bytes) override {
    checkRank(rank);
    return allocateHostBuffer(bytes, 64, "host");
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
  // The group call the workers run: copies of the caller's arguments (so a caller that changes its
  // objects in place between calls is seen), checked once, and on the LL path lowered for every rank.
  struct Job {
    bool valid = false;  // checked and lowered (false after prepare() threw)
    std::optional<PlannedCall> call;  // the call's arguments, resolved and checked
    CollectiveArgs args;
    CollectiveOptions options;
    std::vector<RankBuffers> buffers;
    const plan::Plan* llPlan = nullptr;            // the call's LL plan; null: the slot path
    bool shares = false;                           // run on sharePool_ (llPlan set)
    bool gather = false;                           // a gathered one-shot (LlExecutor::gathers; not shares)
    std::vector<std::byte*> outputs;               // [rank]: buffers[rank].recv (for a gathered call)
    std::uint64_t version = 0;                     // bumped by every prepare()
  };
  // A rank's lowering of job `job` (LlPath::lower), on a cache line of its own.
  struct alignas(64) Lowered {
    std::uint64_t job = 0;  // 0: none
    LlRankCall call;
  };
  // Whether this group call is the one job_ holds. Field by field: the static_asserts catch a field
  // added to these structs and not compared here.
  static_assert(sizeof(CollectiveArgs) == 24 && sizeof(CollectiveOptions) == 64 && sizeof(Straggler) == 32,
                "a field was added: compare it in sameCall()");
  bool sameCall(const CollectiveArgs& a, std::span<const RankBuffers> buffers, const CollectiveOptions& o) const {
    const CollectiveArgs& ja = job_.args;
    const CollectiveOptions& jo = job_.options;
    if (a.collective != ja.collective || a.count != ja.count || a.type != ja.type || a.op != ja.op || a.root != ja.root)
      return false;
    if (o.algorithm != jo.algorithm || o.sliceBytes != jo.sliceBytes || o.timeout != jo.timeout ||
        o.channels != jo.channels || o.ranksPerNode != jo.ranksPerNode || o.straggler.rank != jo.straggler.rank ||
        o.straggler.startDelay != jo.straggler.startDelay || o.straggler.computeFactor != jo.straggler.computeFactor ||
        o.straggler.linkFactor != jo.straggler.linkFactor)
      return false;
    for (std::size_t r = 0; r < buffers.size(); ++r)
      if (buffers[r].send != job_.buffers[r].send || buffers[r].recv != job_.buffers[r].recv) return false;
    return true;
  }

  // Checks a group call once for every rank and makes it job_ (lowered for LL when it is for LL).
  void prepare(const CollectiveArgs& args, std::span<const RankBuffers> buffers, const CollectiveOptions& options) {
    job_.valid = false;
    const PlannedCall call(*this, args, options, kDefaultSliceBytes);
    // Every rank's buffers before any rank starts: a rank refusing its null buffer after the others
    // started would leave them waiting for it until the timeout.
    for (int r = 0; r < nranks(); ++r) call.checkBuffers("host", r, buffers[static_cast<std::size_t>(r)]);
    job_.call.emplace(call);
    job_.args = args;
    job_.options = options;
    job_.buffers.assign(buffers.begin(), buffers.end());
    job_.llPlan = ll_.planFor(0, args, call.algorithm(), call.shape(options, kDefaultChannels, 0));  // the plan is the same for every rank
    job_.shares = job_.llPlan && sharePool_ && options.straggler.startDelay.count() == 0;
    job_.gather = job_.llPlan && !job_.shares && gather_ && LlExecutor::gathers(*job_.llPlan);
    job_.outputs.clear();
    for (const RankBuffers& b : job_.buffers) job_.outputs.push_back(static_cast<std::byte*>(b.recv));
    ++job_.version;
    watchdog_.patience = options.timeout;
    job_.valid = true;
  }

  void checkRank(int rank) const {
    if (rank < 0 || rank >= nranks()) throw InvalidArgument("host: rank " + std::to_string(rank) + " out of range");
  }

  std::shared_ptr<const plan::Plan> planFor(const PlannedCall& call, plan::PlanShape shape) {
    std::lock_guard lock(plansMutex_);
    return plans_.get(planKey(call.args(), call.algorithm(), shape),
                      [&] { return std::make_shared<const plan::Plan>(call.makePlan(shape)); });
  }

  void runRank(int rank, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) {
    checkRank(rank);
    runChecked(rank, PlannedCall(*this, args, options, kDefaultSliceBytes), buffers, options);
  }

  // runRank after its checks (a group call makes them once for all ranks).
  void runChecked(int rank, const PlannedCall& call, RankBuffers buffers, const CollectiveOptions& options) {
    const plan::PlanShape shape = call.shape(options, kDefaultChannels, 0);
    if (ll_.run(rank, call.args(), call.algorithm(), shape, buffers, options)) return;  // small calls: flagged lines (ll_path.h)
    const auto plan = planFor(call, shape);
    auto& scratch = scratch_[static_cast<std::size_t>(rank)];  // only this rank's thread touches it
    const auto scratchBytes = static_cast<std::size_t>(plan->scratchCount) * call.elemSize();
    if (scratch.size() < scratchBytes) scratch.resize(scratchBytes);
    call.checkBuffers("host", rank, buffers);
    const RankMemory mem{static_cast<const std::byte*>(buffers.send), static_cast<std::byte*>(buffers.recv),
                         scratch.data()};
    executor_.run(rank, *plan, mem, call.runOptions(options, rank));
    call.finishAvgOnHost(rank, buffers.recv);
  }

  HostExecutor executor_;
  LlPath ll_;
  std::vector<std::vector<std::byte>> scratch_;
  std::unique_ptr<Lowered[]> lowered_;  // [rank]: touched by that rank's worker only
  std::mutex plansMutex_;
  PlanCache<std::shared_ptr<const plan::Plan>> plans_;  // shared by the ranks' threads (plansMutex_)
  Job job_;  // written by runGroup's caller between calls only; read by the workers during one
  Watchdog watchdog_{std::chrono::nanoseconds(0), [this] { return executor_.progress() + ll_.executor().progress(); },
                     [this](const std::vector<int>& running) {
                       std::string ranks;
                       for (int r : running) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
                       const std::string why = "host: ranks " + ranks + " still running, no slice moved for " +
                                               std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                                  watchdog_.patience).count()) + " ms";
                       executor_.abort(why);
                       ll_.executor().abort(why);
                     }};
  WorkerPool pool_;
  // Shares (more ranks than cores): shares_[t] are the ranks thread t runs; their waits spin, as
  // there is a thread per core.
  std::chrono::nanoseconds shareSpin_ = spinFromEnvironment(kSpinWhenCoresSuffice);
  std::vector<std::vector<int>> shares_;
  std::unique_ptr<WorkerPool> sharePool_;
  bool gather_ = true;
};

}  // namespace

Buffer allocateHostBuffer(std::size_t bytes, std::size_t align, const char* who) {
  void* p = std::aligned_alloc(align, std::max<std::size_t>(align, (bytes + align - 1) / align * align));
  if (!p) throw Error(std::string(who) + ": cannot allocate " + std::to_string(bytes) + " bytes");
  return Buffer(p, bytes, [](void* q) { std::free(q); });
}

std::unique_ptr<Communicator> makeHostCommunicator(int nranks, const HostConfig& config) {
  if (nranks < 1) throw InvalidArgument("host: nranks must be >= 1, got " + std::to_string(nranks));
  return std::make_unique<HostCommunicator>(nranks, config);
}

}  // namespace cclab::host
