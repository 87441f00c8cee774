#include "collectives/host/host_communicator.h"

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "collectives/host/host_executor.h"

namespace cclab::host {
namespace {

// Worker threads for group calls: worker r-1 runs rank r's share of each job.
class WorkerPool {
 public:
  WorkerPool(int nranks, std::function<void(int)> body) : body_(std::move(body)), errors_(static_cast<std::size_t>(nranks)) {
    for (int r = 1; r < nranks; ++r) threads_.emplace_back([this, r] { loop(r); });
  }
  ~WorkerPool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    start_.notify_all();
    for (auto& t : threads_) t.join();
  }
  // Runs body(r) for every rank (rank 0 here), waits for all, rethrows the first failure.
  void runAll() {
    {
      std::lock_guard lock(mutex_);
      ++generation_;
      remaining_ = static_cast<int>(threads_.size());
      std::fill(errors_.begin(), errors_.end(), nullptr);
    }
    start_.notify_all();
    try {
      body_(0);
    } catch (...) {
      errors_[0] = std::current_exception();
    }
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return remaining_ == 0; });  // bounded: every rank's waits time out
    for (auto& e : errors_)
      if (e) std::rethrow_exception(e);
  }

 private:
  void loop(int r) {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        start_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      std::exception_ptr err;
      try {
        body_(r);
      } catch (...) {
        err = std::current_exception();
      }
      std::lock_guard lock(mutex_);
      errors_[static_cast<std::size_t>(r)] = err;
      if (--remaining_ == 0) done_.notify_all();
    }
  }

  std::function<void(int)> body_;
  std::vector<std::exception_ptr> errors_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  std::uint64_t generation_ = 0;
  int remaining_ = 0;
  bool stop_ = false;
};

class HostCommunicator final : public Communicator {
 public:
  explicit HostCommunicator(int nranks)
      : executor_(nranks), scratch_(static_cast<std::size_t>(nranks)),
        pool_(nranks, [this](int r) { runRank(r, *job_.args, job_.buffers[static_cast<std::size_t>(r)], *job_.options); }) {}

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
    checkArgs(args, nranks(), resolve(args, options.algorithm));
    job_ = {&args, buffers, &options};
    pool_.runAll();
  }

  Buffer allocate(int rank, std::size_t bytes) override {
    checkRank(rank);
    constexpr std::size_t kAlign = 64;
    void* p = std::aligned_alloc(kAlign, std::max<std::size_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign));
    if (!p) throw Error("host: cannot allocate " + std::to_string(bytes) + " bytes");
    return Buffer(p, bytes, [](void* q) { std::free(q); });
  }
  void copyToRank(int rank, void* dst, const void* src, std::size_t bytes) override {
    checkRank(rank);
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void copyFromRank(int rank, void* dst, const void* src, std::size_t bytes) override {
    checkRank(rank);
    if (bytes) std::memcpy(dst, src, bytes);
  }

 private:
  struct Job {
    const CollectiveArgs* args = nullptr;
    std::span<const RankBuffers> buffers;
    const CollectiveOptions* options = nullptr;
  };
  using PlanKey = std::tuple<plan::Collective, plan::Algorithm, std::int64_t, int>;

  void checkRank(int rank) const {
    if (rank < 0 || rank >= nranks()) throw InvalidArgument("host: rank " + std::to_string(rank) + " out of range");
  }

  std::shared_ptr<const plan::Plan> planFor(const CollectiveArgs& a, plan::Algorithm algo) {
    const PlanKey key{a.collective, algo, a.count, a.root};
    std::lock_guard lock(plansMutex_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    constexpr std::size_t kMaxCachedPlans = 256;
    if (plans_.size() >= kMaxCachedPlans) plans_.clear();
    auto p = std::make_shared<const plan::Plan>(plan::makePlan(a.collective, algo, nranks(), a.count, a.root));
    plans_.emplace(key, p);
    return p;
  }

  void runRank(int rank, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) {
    checkRank(rank);
    const plan::Algorithm algo = resolve(args, options.algorithm);
    checkArgs(args, nranks(), algo);
    const auto plan = planFor(args, algo);
    const std::size_t elem = sizeOf(args.type);
    auto& scratch = scratch_[static_cast<std::size_t>(rank)];  // only this rank's thread touches it
    const auto scratchBytes = static_cast<std::size_t>(plan->scratchCount) * elem;
    if (scratch.size() < scratchBytes) scratch.resize(scratchBytes);

    const plan::BufferCounts counts = plan::bufferCounts(args.collective, nranks(), args.count);
    const bool isRoot = rank == args.root;
    const bool needOutput = args.collective != plan::Collective::Reduce || isRoot;
    if ((counts.input > 0 && !buffers.send) || (needOutput && counts.output > 0 && !buffers.recv))
      throw InvalidArgument("host: rank " + std::to_string(rank) + " passed a null buffer");

    RunOptions ro;
    ro.elemSize = elem;
    ro.reduce = hostReduceFn(args.type, args.op);
    const std::size_t slice = options.sliceBytes ? options.sliceBytes : kDefaultSliceBytes;
    ro.sliceElems = static_cast<std::int64_t>(std::max<std::size_t>(1, slice / elem));
    ro.timeout = options.timeout;
    if (options.straggler.rank == rank) ro.startDelay = options.straggler.delay;
    const RankMemory mem{static_cast<const std::byte*>(buffers.send), static_cast<std::byte*>(buffers.recv),
                         scratch.data()};
    executor_.run(rank, *plan, mem, ro);
    const bool reduces = args.collective == plan::Collective::AllReduce || args.collective == plan::Collective::ReduceScatter ||
                         (args.collective == plan::Collective::Reduce && isRoot);
    if (args.op == ReduceOp::Avg && reduces)
      finishAvg(buffers.recv, static_cast<std::size_t>(counts.output), args.type, nranks());
  }

  HostExecutor executor_;
  std::vector<std::vector<std::byte>> scratch_;
  std::mutex plansMutex_;
  std::map<PlanKey, std::shared_ptr<const plan::Plan>> plans_;
  Job job_;
  WorkerPool pool_;
};

}  // namespace

std::unique_ptr<Communicator> makeHostCommunicator(int nranks) {
  if (nranks < 1) throw InvalidArgument("host: nranks must be >= 1, got " + std::to_string(nranks));
  return std::make_unique<HostCommunicator>(nranks);
}

}  // namespace cclab::host
