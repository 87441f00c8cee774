#include "collectives/cuda/cuda_communicator.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "collectives/call/planned_call.h"
#include "collectives/cuda/buffer_alias.h"
#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/cuda_context.h"
#include "collectives/cuda/drain_bound.h"
#include "collectives/cuda/ordering.h"
#include "collectives/cuda/plan_cache.h"
#include "collectives/cuda/rendezvous.h"
#include "collectives/cuda/slicing.h"

namespace cclab::cuda {
namespace {

using Clock = std::chrono::steady_clock;

class CudaCommunicator final : public Communicator {
 public:
  explicit CudaCommunicator(const CommConfig& config)
      : context_(config.nranks, config.order != CudaOrder::Events), ordering_(makeOrdering(config.order, context_)),
        rendezvous_(config.nranks), callsSinceSync_(static_cast<std::size_t>(context_.nranks()), 0) {}

  Backend backend() const override { return Backend::Cuda; }
  int nranks() const override { return context_.nranks(); }
  std::string description() const override {
    const DeviceMap& map = context_.map();
    std::string d = "cuda: " + std::to_string(nranks()) + " ranks on " + context_.devices().describe();
    if (map.maxRanksPerDevice() > 1) d += ", up to " + std::to_string(map.maxRanksPerDevice()) + " virtual ranks per device";
    return d + ", order=" + ordering_->name();
  }

  void run(int rank, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) override {
    rendezvous_.arrive(rank, args, buffers, options,
                       [this](const CollectiveArgs& a, std::span<const RankBuffers> b, const CollectiveOptions& o) {
                         std::lock_guard lock(issueMutex_);
                         issue(a, b, o);
                       });
  }

  void runGroup(const CollectiveArgs& args, std::span<const RankBuffers> buffers, const CollectiveOptions& options) override {
    std::lock_guard lock(issueMutex_);
    issue(args, buffers, options);
  }

  void synchronize() override {
    std::vector<int> all(static_cast<std::size_t>(nranks()));
    for (int r = 0; r < nranks(); ++r) all[static_cast<std::size_t>(r)] = r;
    drain(all);
  }
  void synchronizeRank(int rank) override { drain({checkRank(rank)}); }
  void* rankStream(int rank) const override { return context_.rank(checkRank(rank)).stream(); }  // cudaStream_t

  Buffer allocate(int rank, std::size_t bytes) override {
    const int device = context_.rank(checkRank(rank)).device();
    DeviceGuard guard(device);
    void* p = nullptr;
    if (bytes > 0) CCLAB_CUDA_CHECK(cudaMalloc(&p, bytes));
    return Buffer(p, bytes, [device](void* q) { DeviceMemoryTraits::destroy(device, q); });
  }
  void copyToRank(int rank, void* dst, const void* hostSrc, std::size_t bytes) override { copy(rank, dst, hostSrc, bytes); }
  void copyFromRank(int rank, void* hostDst, const void* src, std::size_t bytes) override { copy(rank, hostDst, src, bytes); }
  void zeroOnRank(int rank, void* dst, std::size_t bytes) override {
    RankState& rs = context_.rank(checkRank(rank));
    if (bytes == 0) return;
    DeviceGuard guard(rs.device());
    CCLAB_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, rs.stream()));
    CCLAB_CUDA_CHECK(cudaStreamSynchronize(rs.stream()));
  }

 private:
  // Waits until the streams of `ranks` are empty. Bound (drain_bound.h): every call queued since the
  // last wait may take its timeout, the ll kernel's grace periods and its straggler's delay, so the
  // ll kernel's own spins time out first and report who they waited for.
  void drain(const std::vector<int>& ranks) {
    std::chrono::milliseconds bound;
    {
      std::lock_guard lock(issueMutex_);
      std::int64_t calls = 1;
      for (int r : ranks) calls = std::max(calls, std::exchange(callsSinceSync_[static_cast<std::size_t>(r)], 0));
      bound = drainBound(lastTimeout_, lastStragglerDelay_, calls);
    }
    const auto deadline = Clock::now() + bound;
    for (int r : ranks) {
      RankState& rs = context_.rank(r);
      DeviceGuard guard(rs.device());
      for (int polls = 0;; ++polls) {
        const cudaError_t status = cudaStreamQuery(rs.stream());
        if (status == cudaSuccess) break;
        if (status != cudaErrorNotReady) CCLAB_CUDA_CHECK(status);
        if (Clock::now() > deadline)
          throw TimeoutError("cuda: rank " + std::to_string(r) + "'s stream did not drain within " +
                             std::to_string(bound.count()) + " ms");
        constexpr int kSpinPolls = 10000;  // poll hard first (latency), then let the cores go
        if (polls > kSpinPolls) std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
    std::lock_guard lock(issueMutex_);
    ordering_->checkErrors();
  }

  int checkRank(int rank) const {
    if (rank < 0 || rank >= nranks()) throw InvalidArgument("cuda: rank " + std::to_string(rank) + " out of range");
    return rank;
  }

  void copy(int rank, void* dst, const void* src, std::size_t bytes) {
    RankState& rs = context_.rank(checkRank(rank));
    if (bytes == 0) return;
    DeviceGuard guard(rs.device());
    CCLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, rs.stream()));
    CCLAB_CUDA_CHECK(cudaStreamSynchronize(rs.stream()));
  }

  void issue(const CollectiveArgs& args, std::span<const RankBuffers> buffers, const CollectiveOptions& options) {
    const int p = nranks();
    if (static_cast<int>(buffers.size()) != p)
      throw InvalidArgument("cuda: runGroup needs " + std::to_string(p) + " buffer pairs, got " + std::to_string(buffers.size()));
    const PlannedCall call(*this, args, options, 0);
    const std::size_t elem = call.elemSize();
    const plan::BufferCounts& counts = call.counts();

    PlanRequest req{args.collective, call.algorithm(), p, args.count, args.root,
                    sliceElemsFor(options.sliceBytes, elem, context_.map().devicesUsed()), {}};
    // Channels: 1 unless asked (not yet measured on a GPU: scripts/gpu_check sweeps them); each
    // channel of a rank is a program of its own (lowering.h), on its own stream or blocks.
    req.shape = call.shape(options, 1, 0);
    req.aliases.reserve(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
      const RankBuffers& b = buffers[static_cast<std::size_t>(r)];
      call.checkBuffers("cuda", r, b);
      req.aliases.push_back(detectAlias(args.collective, r, args.count, elem, b.send, b.recv, counts.input, counts.output));
    }

    PreparedCall prepared;
    prepared.planKey = req.key();
    prepared.lowered = plans_.get(req);
    prepared.type = args.type;
    prepared.op = args.op;
    prepared.timeoutNs = static_cast<std::uint64_t>(std::chrono::nanoseconds(options.timeout).count());
    if (options.straggler.rank >= 0 && options.straggler.rank < p && options.straggler.startDelay.count() > 0) {
      prepared.stragglerRank = options.straggler.rank;
      prepared.stragglerDelayNs = static_cast<std::uint64_t>(options.straggler.startDelay.count());
    }
    const LoweredPlan& lp = *prepared.lowered;
    for (int r = 0; r < p; ++r) {  // memory and events first: nothing may allocate during a capture
      RankState& rs = context_.rank(r);
      const RankBuffers& b = buffers[static_cast<std::size_t>(r)];
      RankPointers ptrs;
      ptrs.base[static_cast<int>(plan::Buf::Input)] = const_cast<void*>(b.send);  // only read through
      ptrs.base[static_cast<int>(plan::Buf::Output)] = b.recv;
      ptrs.base[static_cast<int>(plan::Buf::Scratch)] = rs.scratch(static_cast<std::size_t>(lp.scratchCount) * elem);
      const std::size_t channels = lp.programsOf(r).size();  // one staging part and stream per channel
      if (!context_.devices().allDirect()) rs.staging(static_cast<std::size_t>(lp.maxStepElems) * elem * channels);
      rs.reserveStepEvents(lp.stepsOfRank(r));
      rs.reserveChannelStreams(channels - 1);
      for (int buf = 0; buf < 3; ++buf)
        if ((lp.usedBuffers[static_cast<std::size_t>(r)] >> buf & 1U) && !ptrs.base[buf])
          throw InvalidArgument("cuda: rank " + std::to_string(r) + " passed a null " +
                                std::string(plan::name(static_cast<plan::Buf>(buf))) + " buffer that the plan uses");
      prepared.pointers.push_back(ptrs);
      prepared.avg.push_back(call.averages(r) ? AvgFinish{b.recv, counts.output} : AvgFinish{});
    }
    ordering_->run(prepared);
    for (std::int64_t& c : callsSinceSync_) ++c;
    lastTimeout_ = options.timeout;
    lastStragglerDelay_ = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::nanoseconds(prepared.stragglerDelayNs));
  }

  CudaContext context_;
  std::unique_ptr<Ordering> ordering_;
  Rendezvous rendezvous_;
  LoweredPlanCache plans_;
  std::mutex issueMutex_;
  std::chrono::milliseconds lastTimeout_{30000};
  std::chrono::microseconds lastStragglerDelay_{0};
  std::vector<std::int64_t> callsSinceSync_;  // per rank: calls enqueued since its stream was last drained
};

}  // namespace

bool cudaAvailable(std::string* why) { return visibleDeviceCount(why) > 0; }

std::unique_ptr<Communicator> makeCudaCommunicator(const CommConfig& config) {
  return std::make_unique<CudaCommunicator>(config);
}

}  // namespace cclab::cuda
