#include "trainer/cublas/cublas_runner.h"

#include <cuda_runtime_api.h>

#include <limits>
#include <string>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/cuda_resources.h"
#include "trainer/cublas/cublas_kernels.h"
#include "trainer/cublas/cublas_library.h"

namespace cclab::trainer::cublas {
namespace {

void checkCublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw Error(std::string("cuBLAS ") + what + " failed with status " + std::to_string(static_cast<int>(status)));
}

int blasInt(std::int64_t v) {
  if (v < 0 || v > std::numeric_limits<int>::max()) throw InvalidArgument("cuBLAS: dimension " + std::to_string(v) + " does not fit an int");
  return static_cast<int>(v);
}

class CublasRunner final : public OpRunner {
 public:
  CublasRunner(Communicator& comm, int rank, const RegionSizes& sizes)
      : comm_(comm), rank_(rank), sizes_(sizes), api_(loadApi()),
        commStream_(static_cast<cudaStream_t>(comm.rankStream(rank))) {
    if (comm.backend() != Backend::Cuda || commStream_ == nullptr)
      throw InvalidArgument("the cuBLAS path needs the cuda backend's per-rank streams");
    CCLAB_CUDA_CHECK(cudaStreamGetDevice(commStream_, &device_));
    CCLAB_CUDA_CHECK(cudaSetDevice(device_));
    ownedStream_ = cuda::makeStream(device_);
    stream_ = ownedStream_.get();
    computed_ = cuda::makeEvent(device_);
    communicated_ = cuda::makeEvent(device_);
    const auto alloc = [&](std::int64_t elems, std::size_t elemBytes) {
      const std::size_t bytes = static_cast<std::size_t>(elems) * elemBytes;
      Buffer b = comm.allocate(rank, bytes);
      comm.zeroOnRank(rank, b.data(), bytes);
      return b;
    };
    for (int i = 0; i < 3; ++i) floats_.push_back(alloc(sizes.params, sizeof(float)));  // params, grads, velocity
    for (std::int64_t a : sizes.activations) floats_.push_back(alloc(a, sizeof(float)));
    for (int i = 0; i < 2; ++i) floats_.push_back(alloc(sizes.delta, sizeof(float)));
    labels_ = alloc(sizes.batch, sizeof(int));
    lossRows_ = alloc(sizes.lossRows, sizeof(double));
    correct_ = alloc(sizes.lossRows, sizeof(int));
    checkCublas(api_.create(&handle_), "create");
    checkCublas(api_.setStream(handle_, stream_), "set stream");
    checkCublas(api_.setMathMode(handle_, CUBLAS_DEFAULT_MATH), "set math mode");  // FP32, no TF32
  }
  CublasRunner(const CublasRunner&) = delete;
  CublasRunner& operator=(const CublasRunner&) = delete;
  ~CublasRunner() override {  // never throws; stream, events and regions release themselves after this
    cudaSetDevice(device_);
    if (handle_ != nullptr) api_.destroy(handle_);
    if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  }

  void* region(Region r, int index) override {
    if (index < 0 || index >= sizes_.count(r)) throw InvalidArgument("cuBLAS runner: no region " + std::string(name(r)));
    switch (r) {
      case Region::Params: return floats_[0].data();
      case Region::Grads: return floats_[1].data();
      case Region::Velocity: return floats_[2].data();
      case Region::Activation: return floats_[3 + static_cast<std::size_t>(index)].data();
      case Region::Delta: return floats_[3 + sizes_.activations.size() + static_cast<std::size_t>(index)].data();
      case Region::Labels: return labels_.data();
      case Region::LossRows: return lossRows_.data();
      case Region::Correct: return correct_.data();
    }
    return nullptr;
  }

  void run(const Op& op) override {
    checkOp(op, sizes_);  // host-side bounds: no op reaches outside its device region
    CCLAB_CUDA_CHECK(cudaSetDevice(device_));
    float* c = at(op.c);
    switch (op.kind) {
      case OpKind::Gemm:
        checkCublas(api_.sgemm(handle_, op.transA ? CUBLAS_OP_T : CUBLAS_OP_N, op.transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                               blasInt(op.m), blasInt(op.n), blasInt(op.k), &op.alpha, at(op.a), blasInt(op.a.ld), at(op.b),
                               blasInt(op.b.ld), &op.beta, c, blasInt(op.c.ld)),
                    "sgemm");
        return;
      case OpKind::BiasRows: kernels::biasRows(stream_, c, op.c.ld, at(op.a), op.m, op.n); return;
      case OpKind::Relu: kernels::relu(stream_, c, op.c.ld, op.m, op.n); return;
      case OpKind::ReluMask: kernels::reluMask(stream_, c, op.c.ld, at(op.a), op.a.ld, op.m, op.n); return;
      case OpKind::BiasGrad: kernels::biasGrad(stream_, c, at(op.a), op.a.ld, op.m, op.n); return;
      case OpKind::SoftmaxXent:
        kernels::softmaxXent(stream_, at(op.a), op.a.ld, static_cast<const int*>(labels_.data()), c, op.c.ld, op.m, op.n,
                             op.alpha, static_cast<double*>(lossRows_.data()) + op.b.offset,
                             static_cast<int*>(correct_.data()) + op.b.offset);
        return;
      case OpKind::Sgd:
        kernels::sgd(stream_, c, at(op.b), at(op.a), op.n, op.alpha, op.sgd.lr, op.sgd.momentum, op.sgd.weightDecay);
        return;
      case OpKind::Zero:
        CCLAB_CUDA_CHECK(cudaMemsetAsync(c, 0, static_cast<std::size_t>(op.n) * sizeof(float), stream_));
        return;
    }
  }

  void upload(void* dst, const void* src, std::size_t bytes) override {
    CCLAB_CUDA_CHECK(cudaSetDevice(device_));
    // From pageable memory the call returns once `src` is staged: the caller may reuse it.
    CCLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
  }

  // A copy into pageable memory would block at once; it is done in synchronize(), after the wait.
  void download(void* dst, const void* src, std::size_t bytes) override { pending_.push_back({dst, src, bytes}); }

  // A cudaStreamWaitEvent waits for the event's latest record at the time of the call, so one event
  // per direction serves every hand-off.
  void delay(std::int64_t ns) override {
    CCLAB_CUDA_CHECK(cudaSetDevice(device_));
    kernels::spin(stream_, ns);
  }
  void handOff() override {
    CCLAB_CUDA_CHECK(cudaSetDevice(device_));
    CCLAB_CUDA_CHECK(cudaEventRecord(computed_.get(), stream_));
    CCLAB_CUDA_CHECK(cudaStreamWaitEvent(commStream_, computed_.get(), 0));
  }
  void join() override {
    CCLAB_CUDA_CHECK(cudaSetDevice(device_));
    if (inStep_) CCLAB_CUDA_CHECK(cudaEventRecord(timer(joinWait_), stream_));
    CCLAB_CUDA_CHECK(cudaEventRecord(communicated_.get(), commStream_));
    CCLAB_CUDA_CHECK(cudaStreamWaitEvent(stream_, communicated_.get(), 0));
    if (inStep_) CCLAB_CUDA_CHECK(cudaEventRecord(timer(joinDone_), stream_));
  }

  // Timing events are recorded on the stream whose progress they time: the step's ends and the join on
  // the compute stream, each collective's ends on the communication stream (its begin is recorded
  // after the hand-off's wait, so it completes when the collective can start).
  void stepBegin() override {
    CCLAB_CUDA_CHECK(cudaSetDevice(device_));
    comms_ = 0;
    inStep_ = true;
    CCLAB_CUDA_CHECK(cudaEventRecord(timer(stepBegin_), stream_));
  }
  void commBegin() override {
    if (!inStep_) return;
    if (commBegin_.size() <= comms_) {
      commBegin_.emplace_back();
      commEnd_.emplace_back();
    }
    CCLAB_CUDA_CHECK(cudaEventRecord(timer(commBegin_[comms_]), commStream_));
  }
  void commEnd() override {
    if (!inStep_) return;
    CCLAB_CUDA_CHECK(cudaEventRecord(timer(commEnd_[comms_++]), commStream_));
  }
  void stepEnd() override {
    CCLAB_CUDA_CHECK(cudaEventRecord(timer(stepEnd_), stream_));
    inStep_ = false;
  }
  StepTimes stepTimes() override {
    StepTimes t;
    t.stepNs = elapsedNs(stepBegin_, stepEnd_);
    for (std::size_t i = 0; i < comms_; ++i) t.commNs += elapsedNs(commBegin_[i], commEnd_[i]);
    t.exposedNs = joinWait_.get() != nullptr ? elapsedNs(joinWait_, joinDone_) : 0;
    return t;
  }

  void synchronize() override {
    // The communication stream first: bounded by the communicator, device-side errors reported; the
    // compute stream then holds only kernels and copies (whatever waits on collectives waits on
    // work already done).
    comm_.synchronizeRank(rank_);
    CCLAB_CUDA_CHECK(cudaSetDevice(device_));
    CCLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (const Pending& p : pending_) CCLAB_CUDA_CHECK(cudaMemcpyAsync(p.dst, p.src, p.bytes, cudaMemcpyDeviceToHost, stream_));
    pending_.clear();
    CCLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  std::string description() const override { return "cuBLAS (" + api_.origin + ") on device " + std::to_string(device_); }

 private:
  static const CublasApi& loadApi() {
    std::string why;
    const CublasApi* api = cublasApi(&why);
    if (!api) throw Error(why);
    return *api;
  }
  cudaEvent_t timer(cuda::Event& e) {  // a timing event, created on first use
    if (e.get() == nullptr) e = cuda::makeEvent(device_, true);
    return e.get();
  }
  static std::int64_t elapsedNs(const cuda::Event& from, const cuda::Event& to) {
    float ms = 0.0F;
    CCLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, from.get(), to.get()));
    return static_cast<std::int64_t>(static_cast<double>(ms) * 1e6);
  }
  float* at(const MatrixRef& m) { return static_cast<float*>(region(m.region, m.index)) + m.offset; }

  struct Pending {
    void* dst;
    const void* src;
    std::size_t bytes;
  };
  Communicator& comm_;
  int rank_;
  RegionSizes sizes_;
  const CublasApi& api_;
  cudaStream_t commStream_;         // the communicator's stream for this rank (collectives)
  cuda::Stream ownedStream_;
  cudaStream_t stream_ = nullptr;  // this runner's compute stream (GEMMs, kernels, copies)
  cuda::Event computed_;           // compute -> communication hand-off
  cuda::Event communicated_;       // communication -> compute join
  bool inStep_ = false;
  std::size_t comms_ = 0;  // collectives timed in this step
  cuda::Event stepBegin_, stepEnd_, joinWait_, joinDone_;
  std::vector<cuda::Event> commBegin_, commEnd_;
  int device_ = 0;
  cublasHandle_t handle_ = nullptr;
  std::vector<Buffer> floats_;
  Buffer labels_, lossRows_, correct_;
  std::vector<Pending> pending_;
};

}  // namespace

bool cublasAvailable(std::string* why) {
  std::string reason;
  if (!backendAvailable(Backend::Cuda, &reason)) {
    if (why) *why = reason;
    return false;
  }
  return cublasApi(why) != nullptr;
}

std::unique_ptr<OpRunner> makeCublasRunner(Communicator& comm, int rank, const RegionSizes& sizes) {
  return std::make_unique<CublasRunner>(comm, rank, sizes);
}

}  // namespace cclab::trainer::cublas
