// The cuBLAS path on a GPU: the cuBLAS runner (cublasSgemm + kernels on the rank's stream) against
// the CPU reference runner (interpret.h) that the CPU tests tie to the CPU Mlp. One step on one rank,
// then a few data-parallel steps on 2 and 3 ranks of the cuda backend with the buckets allreduced in
// place on device memory, against the same steps on the host backend. Every test skips with the
// reason where no device or cuBLAS is usable, and fails under CCLAB_EXPECT_GPU=1 (scripts/gpu_check).
// This binary uses no BLAS on the host (the reference is the interpreter), so it needs no OpenBLAS
// on the GPU machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "collectives/communicator.h"
#include "tests/cuda/gpu_required.h"
#include "trainer/cublas/cublas_runner.h"
#include "trainer/cublas/device_mlp.h"
#include "trainer/cublas/interpret.h"

namespace cclab::trainer::cublas {
namespace {

#define CCLAB_REQUIRE_CUBLAS()                                                                   \
  do {                                                                                           \
    CCLAB_REQUIRE_GPU();                                                                         \
    std::string why_;                                                                            \
    if (!cublasAvailable(&why_)) {                                                               \
      if (::cclab::testing::gpuExpected()) FAIL() << "cuBLAS expected (CCLAB_EXPECT_GPU=1) but unavailable: " << why_; \
      GTEST_SKIP() << "cuBLAS test skipped: " << why_;                                           \
    }                                                                                            \
  } while (false)

std::vector<float> randomVector(std::size_t n, std::uint64_t seed, float scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0F, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

double maxRelDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = a.size() == b.size() ? 0.0 : INFINITY;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, std::abs(static_cast<double>(a[i]) - b[i]) / std::max(1e-2, std::abs(static_cast<double>(b[i]))));
  return m;
}

struct Run {
  std::vector<std::vector<float>> params;  // per rank, after the steps
  std::vector<double> loss;                // rank 0's loss per step
  StepTimes last;                          // rank 0's last step's time split
};

// `steps` data-parallel steps on `comm`: every rank starts from the same parameters, trains on its
// own random batch per step (class labels cycling), allreduces each layer's gradient in place as soon
// as the layer's backward is enqueued (one bucket per layer, last layer first, on the communication
// stream while the compute stream goes on with the layers below), then SGD with 1/N.
template <class MakeRunner>
Run train(Communicator& comm, const ParameterLayout& layout, std::int64_t batch, int steps, MakeRunner makeRunner) {
  const int n = comm.nranks();
  const auto init = randomVector(static_cast<std::size_t>(layout.parameterCount()), 17, 0.2F);
  Run out;
  out.params.resize(static_cast<std::size_t>(n));
  out.loss.resize(static_cast<std::size_t>(steps));
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        DeviceMlp mlp(makeRunner(r, regionSizes(layout, batch)), layout, batch, 1, 1.0F / static_cast<float>(n),
                      SgdConfig{0.05F, 0.9F, 1e-4F});
        mlp.uploadParams(init);
        for (int s = 0; s < steps; ++s) {
          const auto x = randomVector(static_cast<std::size_t>(batch * layout.inputs()), 1000 + 31 * s + r, 1.0F);
          std::vector<int> y(static_cast<std::size_t>(batch));
          for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int>((i + static_cast<std::size_t>(s + r)) % static_cast<std::size_t>(layout.classes()));
          mlp.beginStep();
          mlp.forward(0, x, y);
          mlp.backward([&](int l) {
            const LayerSlice& ls = layout.layer(l);
            float* g = mlp.grads() + ls.begin();
            if (n == 1) return;
            mlp.handOff();  // the allreduce (communication stream) after this layer's backward (compute stream)
            comm.allReduce(r, g, g, ls.count(), DataType::Float32, ReduceOp::Sum);
            mlp.collectiveEnqueued();
          });
          mlp.join();
          mlp.sgd();
          const StepLoss loss = mlp.finishStep();
          if (r == 0) out.loss[static_cast<std::size_t>(s)] = loss.lossSum;
          if (r == 0) out.last = mlp.stepTimes();
        }
        out.params[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(layout.parameterCount()));
        mlp.downloadParams(out.params[static_cast<std::size_t>(r)]);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
  return out;
}

void compareWithReference(int ranks, int steps) {
  const ParameterLayout layout({67, 45, 23, 10});
  const std::int64_t batch = 19;
  const auto host = makeCommunicator(Backend::Host, CommConfig{.nranks = ranks});
  const Run ref = train(*host, layout, batch, steps, [](int, const RegionSizes& s) { return makeHostRunner(s); });
  const auto gpu = makeCommunicator(Backend::Cuda, CommConfig{.nranks = ranks});
  const Run dev = train(*gpu, layout, batch, steps,
                        [&](int r, const RegionSizes& s) { return makeCublasRunner(*gpu, r, s); });
  for (int r = 0; r < ranks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    // Float GEMMs (any summation order, fused multiply-adds) against the double-accumulating
    // reference, through momentum over a few steps.
    EXPECT_LT(maxRelDiff(dev.params[static_cast<std::size_t>(r)], ref.params[static_cast<std::size_t>(r)]), 1e-3);
    EXPECT_LT(maxRelDiff(dev.params[static_cast<std::size_t>(r)], dev.params[0]), 1e-5);  // replicas agree
  }
  for (int s = 0; s < steps; ++s)
    EXPECT_NEAR(dev.loss[static_cast<std::size_t>(s)], ref.loss[static_cast<std::size_t>(s)], 1e-3 * std::max(1.0, ref.loss[static_cast<std::size_t>(s)]));
  // Device timers: a step takes time; with ranks, the collectives do and fit in the step's span.
  EXPECT_GT(dev.last.stepNs, 0);
  EXPECT_LE(dev.last.exposedNs, dev.last.stepNs);
  if (ranks > 1) {
    EXPECT_GT(dev.last.commNs, 0);
  }
  // The steps moved the parameters (the comparison is not of two untouched copies).
  const auto init = randomVector(static_cast<std::size_t>(layout.parameterCount()), 17, 0.2F);
  EXPECT_GT(maxRelDiff(ref.params[0], init), 1e-3);
}

TEST(CublasGpu, OneStepOnOneRankMatchesTheCpuReference) {
  CCLAB_REQUIRE_CUBLAS();
  compareWithReference(1, 1);
}

TEST(CublasGpu, FewStepsOnOneRankMatchTheCpuReference) {
  CCLAB_REQUIRE_CUBLAS();
  compareWithReference(1, 5);
}

TEST(CublasGpu, DataParallelStepsWithInPlaceDeviceBucketsMatchTheHostBackend) {
  CCLAB_REQUIRE_CUBLAS();
  compareWithReference(2, 4);
  compareWithReference(3, 3);
}

TEST(CublasGpu, CudaCommunicatorHasAStreamPerRankAndSynchronizesOneRank) {
  CCLAB_REQUIRE_GPU();
  const auto comm = makeCommunicator(Backend::Cuda, CommConfig{.nranks = 2});
  EXPECT_NE(comm->rankStream(0), nullptr);
  EXPECT_NE(comm->rankStream(0), comm->rankStream(1));  // the events ordering: one lane per rank
  EXPECT_NO_THROW(comm->synchronizeRank(1));
  EXPECT_THROW(comm->synchronizeRank(2), InvalidArgument);
}

}  // namespace
}  // namespace cclab::trainer::cublas
