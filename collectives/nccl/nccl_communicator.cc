#include "collectives/nccl/nccl_communicator.h"

#include <chrono>
#include <thread>
#include <vector>

#include "collectives/call/checks.h"
#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/cuda_resources.h"
#include "collectives/cuda/device_set.h"
#include "collectives/cuda/kernels.h"
#include "collectives/nccl/nccl_library.h"

namespace cclab::nccl {
namespace {

using Clock = std::chrono::steady_clock;

ncclDataType_t toNccl(DataType t) {
  switch (t) {
    case DataType::Float32: return ncclFloat32;
    case DataType::Float64: return ncclFloat64;
    case DataType::Float16: return ncclFloat16;
    case DataType::BFloat16: return ncclBfloat16;
    case DataType::Int32: return ncclInt32;
    case DataType::Int8: return ncclInt8;
    case DataType::UInt8: return ncclUint8;
  }
  throw InvalidArgument("nccl: unknown data type");
}

ncclRedOp_t toNccl(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Prod: return ncclProd;
    case ReduceOp::Min: return ncclMin;
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Avg: return ncclAvg;
  }
  throw InvalidArgument("nccl: unknown reduce op");
}

// One ncclComm_t, destroyed (never throwing) with its owner.
class Comm {
 public:
  Comm(const NcclApi& api, ncclComm_t c) : api_(&api), comm_(c) {}
  Comm(Comm&& o) noexcept : api_(o.api_), comm_(std::exchange(o.comm_, nullptr)) {}
  Comm& operator=(Comm&&) = delete;
  Comm(const Comm&) = delete;
  ~Comm() {
    if (comm_) api_->commDestroy(comm_);  // its status is of no use here
  }
  [[nodiscard]] ncclComm_t get() const { return comm_; }
  void abort() {
    if (comm_) api_->commAbort(std::exchange(comm_, nullptr));
  }

 private:
  const NcclApi* api_;
  ncclComm_t comm_;
};

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(const NcclApi& api, int nranks, int ndevices) : api_(api), devices_(nranks) {
    std::vector<int> devlist(static_cast<std::size_t>(nranks));
    for (int r = 0; r < nranks; ++r) devlist[static_cast<std::size_t>(r)] = r;
    std::vector<ncclComm_t> raw(static_cast<std::size_t>(nranks), nullptr);
    CCLAB_NCCL_CHECK(api_, api_.commInitAll(raw.data(), nranks, devlist.data()));
    for (int r = 0; r < nranks; ++r) {
      comms_.emplace_back(api_, raw[static_cast<std::size_t>(r)]);
      streams_.push_back(cuda::makeStream(r));
    }
    int version = 0;
    CCLAB_NCCL_CHECK(api_, api_.getVersion(&version));
    description_ = "nccl " + versionString(version) + ": " + std::to_string(nranks) + " ranks on " +
                   devices_.describe() + " (" + std::to_string(ndevices) + " visible)";
  }

  Backend backend() const override { return Backend::Nccl; }
  int nranks() const override { return static_cast<int>(comms_.size()); }
  std::string description() const override { return description_; }

  void run(int rank, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) override {
    check(args, options, rank);
    straggle(rank, options);
    enqueue(rank, args, buffers);
    remember(options);
  }

  void runGroup(const CollectiveArgs& args, std::span<const RankBuffers> buffers, const CollectiveOptions& options) override {
    if (static_cast<int>(buffers.size()) != nranks())
      throw InvalidArgument("nccl: runGroup needs " + std::to_string(nranks()) + " buffer pairs, got " +
                            std::to_string(buffers.size()));
    check(args, options, 0);
    for (int r = 0; r < nranks(); ++r) straggle(r, options);
    CCLAB_NCCL_CHECK(api_, api_.groupStart());
    try {
      for (int r = 0; r < nranks(); ++r) enqueue(r, args, buffers[static_cast<std::size_t>(r)]);
    } catch (...) {
      api_.groupEnd();
      throw;
    }
    CCLAB_NCCL_CHECK(api_, api_.groupEnd());
    remember(options);
  }

  void synchronize() override {
    const auto deadline = Clock::now() + timeout_;
    for (int r = 0; r < nranks(); ++r) drain(r, deadline);
  }
  // This rank's stream only (the trainer's per-rank wait).
  void synchronizeRank(int rank) override {
    checkRank(rank);
    drain(rank, Clock::now() + timeout_);
  }
  void* rankStream(int rank) const override {
    checkRank(rank);
    return streams_[static_cast<std::size_t>(rank)].get();
  }

  Buffer allocate(int rank, std::size_t bytes) override {
    checkRank(rank);
    cuda::DeviceGuard guard(rank);
    void* p = nullptr;
    if (bytes > 0) CCLAB_CUDA_CHECK(cudaMalloc(&p, bytes));
    return Buffer(p, bytes, [rank](void* q) { cuda::DeviceMemoryTraits::destroy(rank, q); });
  }
  void copyToRank(int rank, void* dst, const void* src, std::size_t bytes) override { copy(rank, dst, src, bytes); }
  void copyFromRank(int rank, void* dst, const void* src, std::size_t bytes) override { copy(rank, dst, src, bytes); }
  void zeroOnRank(int rank, void* dst, std::size_t bytes) override {
    checkRank(rank);
    if (bytes == 0) return;
    cuda::DeviceGuard guard(rank);
    const cudaStream_t s = streams_[static_cast<std::size_t>(rank)].get();
    CCLAB_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, s));
    CCLAB_CUDA_CHECK(cudaStreamSynchronize(s));
  }

 private:
  void drain(int r, Clock::time_point deadline) {
    cuda::DeviceGuard guard(r);
    for (int polls = 0;; ++polls) {
      const cudaError_t status = cudaStreamQuery(streams_[static_cast<std::size_t>(r)].get());
      if (status == cudaSuccess) return;
      if (status != cudaErrorNotReady) CCLAB_CUDA_CHECK(status);
      ncclResult_t async = ncclSuccess;
      CCLAB_NCCL_CHECK(api_, api_.commGetAsyncError(comms_[static_cast<std::size_t>(r)].get(), &async));
      CCLAB_NCCL_CHECK(api_, async);
      if (Clock::now() > deadline) {
        for (Comm& c : comms_) c.abort();
        broken_ = true;
        throw TimeoutError("nccl: rank " + std::to_string(r) + " did not finish within " +
                           std::to_string(timeout_.count()) + " ms (communicators aborted)");
      }
      constexpr int kSpinPolls = 10000;
      if (polls > kSpinPolls) std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  void checkRank(int rank) const {
    if (rank < 0 || rank >= nranks()) throw InvalidArgument("nccl: rank " + std::to_string(rank) + " out of range");
  }
  void check(const CollectiveArgs& args, const CollectiveOptions& options, int rank) const {
    checkRank(rank);
    if (broken_) throw Error("nccl: communicator unusable after an earlier timeout");
    checkArgs(args, nranks(), resolve(args, options.algorithm));
    if (options.channels > 0 || options.ranksPerNode > 0)  // NCCL builds its own channels and topology
      throw InvalidArgument("nccl: channels and ranks per node are NCCL's own choice (NCCL_MIN_NCHANNELS, "
                            "NCCL_MAX_NCHANNELS); run without --channels/--ranks-per-node");
  }
  void remember(const CollectiveOptions& options) { timeout_ = options.timeout; }

  void straggle(int rank, const CollectiveOptions& options) {
    if (options.straggler.rank != rank || options.straggler.startDelay.count() <= 0) return;
    cuda::DeviceGuard guard(rank);
    cuda::launchSpin(streams_[static_cast<std::size_t>(rank)].get(),
                     static_cast<std::uint64_t>(options.straggler.startDelay.count()));
  }

  void enqueue(int rank, const CollectiveArgs& a, RankBuffers b) {
    cuda::DeviceGuard guard(rank);
    const ncclComm_t comm = comms_[static_cast<std::size_t>(rank)].get();
    const cudaStream_t s = streams_[static_cast<std::size_t>(rank)].get();
    const auto n = static_cast<std::size_t>(a.count);
    const ncclDataType_t t = toNccl(a.type);
    switch (a.collective) {
      case plan::Collective::AllReduce:
        CCLAB_NCCL_CHECK(api_, api_.allReduce(b.send, b.recv, n, t, toNccl(a.op), comm, s));
        break;
      case plan::Collective::ReduceScatter:
        CCLAB_NCCL_CHECK(api_, api_.reduceScatter(b.send, b.recv, n, t, toNccl(a.op), comm, s));
        break;
      case plan::Collective::AllGather: CCLAB_NCCL_CHECK(api_, api_.allGather(b.send, b.recv, n, t, comm, s)); break;
      case plan::Collective::Broadcast:
        CCLAB_NCCL_CHECK(api_, api_.broadcast(b.send, b.recv, n, t, a.root, comm, s));
        break;
      case plan::Collective::Reduce:
        CCLAB_NCCL_CHECK(api_, api_.reduce(b.send, b.recv, n, t, toNccl(a.op), a.root, comm, s));
        break;
    }
  }

  void copy(int rank, void* dst, const void* src, std::size_t bytes) {
    checkRank(rank);
    if (bytes == 0) return;
    cuda::DeviceGuard guard(rank);
    const cudaStream_t s = streams_[static_cast<std::size_t>(rank)].get();
    CCLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
    CCLAB_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  const NcclApi& api_;
  cuda::DeviceSet devices_;
  std::vector<Comm> comms_;
  std::vector<cuda::Stream> streams_;
  std::string description_;
  std::chrono::milliseconds timeout_{30000};
  bool broken_ = false;
};

}  // namespace

bool ncclAvailable(std::string* why) {
  if (!ncclApi(why)) return false;
  return cuda::visibleDeviceCount(why) > 0;
}

std::unique_ptr<Communicator> makeNcclCommunicator(const CommConfig& config) {
  std::string why;
  const NcclApi* api = ncclApi(&why);
  if (!api) throw Error("nccl: " + why);
  const int ndev = cuda::visibleDeviceCount(&why);
  if (ndev < 1) throw Error("nccl: " + why);
  if (config.nranks > ndev)
    throw Error("NCCL needs one device per rank: " + std::to_string(config.nranks) + " ranks, " + std::to_string(ndev) +
                " device(s) visible");
  return std::make_unique<NcclCommunicator>(*api, config.nranks, ndev);
}

}  // namespace cclab::nccl
