#include "trainer/cublas/interpret.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "collectives/core/errors.h"
#include "trainer/cublas/elementwise.h"

namespace cclab::trainer::cublas {
namespace {

std::size_t floatSlot(Region r, int index, const RegionSizes& s) {
  switch (r) {
    case Region::Params: return 0;
    case Region::Grads: return 1;
    case Region::Velocity: return 2;
    case Region::Activation: return 3 + static_cast<std::size_t>(index);
    case Region::Delta: return 3 + s.activations.size() + static_cast<std::size_t>(index);
    default: throw InvalidArgument("interpret: region " + std::string(name(r)) + " holds no floats");
  }
}

// c = alpha·op(a)·op(b) + beta·c, column-major, as cublasSgemm (beta == 0: c is only written).
void gemm(const Op& op, HostRegions& regions) {
  const float* a = regions.floats(op.a);
  const float* b = regions.floats(op.b);
  float* c = regions.floats(op.c);
  const std::int64_t lda = op.a.ld, ldb = op.b.ld, ldc = op.c.ld;
  for (std::int64_t j = 0; j < op.n; ++j)
    for (std::int64_t i = 0; i < op.m; ++i) {
      double acc = 0.0;
      for (std::int64_t p = 0; p < op.k; ++p) {
        const float av = op.transA ? a[p + i * lda] : a[i + p * lda];
        const float bv = op.transB ? b[j + p * ldb] : b[p + j * ldb];
        acc += static_cast<double>(av) * static_cast<double>(bv);
      }
      float& out = c[i + j * ldc];
      const double prior = op.beta == 0.0F ? 0.0 : static_cast<double>(op.beta) * static_cast<double>(out);
      out = static_cast<float>(static_cast<double>(op.alpha) * acc + prior);
    }
}

}  // namespace

HostRegions::HostRegions(const RegionSizes& sizes) : sizes_(sizes) {
  const auto n = [](std::int64_t v) { return static_cast<std::size_t>(v); };
  for (int i = 0; i < 3; ++i) floats_.emplace_back(n(sizes.params));
  for (std::int64_t a : sizes.activations) floats_.emplace_back(n(a));
  for (int i = 0; i < 2; ++i) floats_.emplace_back(n(sizes.delta));
  labels_.resize(n(sizes.batch));
  correct_.resize(n(sizes.lossRows));
  lossRows_.resize(n(sizes.lossRows));
}

void* HostRegions::at(Region r, int index) {
  if (index < 0 || index >= sizes_.count(r)) throw InvalidArgument("interpret: no region " + std::string(name(r)) + "[" + std::to_string(index) + "]");
  switch (r) {
    case Region::Labels: return labels_.data();
    case Region::LossRows: return lossRows_.data();
    case Region::Correct: return correct_.data();
    default: return floats_[floatSlot(r, index, sizes_)].data();
  }
}

void interpret(const Op& op, HostRegions& regions) {
  checkOp(op, regions.sizes());
  const std::int64_t m = op.m, n = op.n;
  switch (op.kind) {
    case OpKind::Gemm: gemm(op, regions); return;
    case OpKind::BiasRows: {
      float* c = regions.floats(op.c);
      const float* bias = regions.floats(op.a);
      for (std::int64_t j = 0; j < n; ++j) std::copy_n(bias, m, c + j * op.c.ld);
      return;
    }
    case OpKind::Relu: {
      float* c = regions.floats(op.c);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) c[i + j * op.c.ld] = reluOf(c[i + j * op.c.ld]);
      return;
    }
    case OpKind::ReluMask: {
      float* c = regions.floats(op.c);
      const float* a = regions.floats(op.a);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) c[i + j * op.c.ld] = reluMasked(c[i + j * op.c.ld], a[i + j * op.a.ld]);
      return;
    }
    case OpKind::BiasGrad: {
      float* c = regions.floats(op.c);
      const float* dz = regions.floats(op.a);
      for (std::int64_t i = 0; i < m; ++i) c[i] = biasGradRow(c[i], dz, i, n, op.a.ld);
      return;
    }
    case OpKind::SoftmaxXent: {
      const float* z = regions.floats(op.a);
      float* g = regions.floats(op.c);
      const int* labels = static_cast<const int*>(regions.at(Region::Labels, 0));
      auto* loss = static_cast<double*>(regions.at(Region::LossRows, 0)) + op.b.offset;
      int* correct = static_cast<int*>(regions.at(Region::Correct, 0)) + op.b.offset;
      for (std::int64_t j = 0; j < n; ++j) {
        const int y = labels[j];
        if (y < 0 || y >= m) throw InvalidArgument("interpret: label " + std::to_string(y) + " outside the classes");
        const XentRow r = softmaxXentRow(z + j * op.a.ld, m, y, op.alpha, g + j * op.c.ld);
        loss[j] = r.loss;
        correct[j] = r.correct;
      }
      return;
    }
    case OpKind::Sgd: {
      float* w = regions.floats(op.c);
      const float* g = regions.floats(op.a);
      float* v = regions.floats(op.b);
      for (std::int64_t i = 0; i < n; ++i) sgdElement(w[i], v[i], g[i], op.alpha, op.sgd.lr, op.sgd.momentum, op.sgd.weightDecay);
      return;
    }
    case OpKind::Zero: std::fill_n(regions.floats(op.c), n, 0.0F); return;
  }
}

namespace {

class HostRunner final : public OpRunner {
 public:
  explicit HostRunner(const RegionSizes& sizes) : regions_(sizes) {}
  void* region(Region r, int index) override { return regions_.at(r, index); }
  void run(const Op& op) override { interpret(op, regions_); }
  void upload(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void delay(std::int64_t ns) override {
    if (ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
  }
  void handOff() override {}  // every op and collective completes when called
  void join() override {}
  void synchronize() override {}
  void stepBegin() override {
    times_ = {};
    stepStart_ = Clock::now();
  }
  void commBegin() override { commStart_ = Clock::now(); }
  void commEnd() override { times_.commNs += ns(Clock::now() - commStart_); }
  void stepEnd() override {
    times_.stepNs = ns(Clock::now() - stepStart_);
    times_.exposedNs = times_.commNs;  // nothing overlaps on one thread
  }
  StepTimes stepTimes() override { return times_; }
  std::string description() const override { return "CPU reference of the cuBLAS program"; }

 private:
  using Clock = std::chrono::steady_clock;
  static std::int64_t ns(Clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }
  HostRegions regions_;
  StepTimes times_;
  Clock::time_point stepStart_, commStart_;
};

}  // namespace

std::unique_ptr<OpRunner> makeHostRunner(const RegionSizes& sizes) { return std::make_unique<HostRunner>(sizes); }

}  // namespace cclab::trainer::cublas
