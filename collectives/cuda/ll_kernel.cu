// The low-latency ordering's persistent kernel (see ll_kernel.h for the protocol).
#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/drain_bound.h"
#include "collectives/cuda/ll_kernel.h"
#include "collectives/cuda/reduce_copy.cuh"

namespace cclab::cuda {
namespace {

__device__ inline unsigned long long globalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ inline unsigned long long loadAcquire(const unsigned long long* p, bool sys) {
  unsigned long long v;
  if (sys)
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  else
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ inline unsigned int loadAcquire32(const unsigned int* p, bool sys) {
  unsigned int v;
  if (sys)
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  else
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ inline void storeRelease(unsigned long long* p, unsigned long long v, bool sys) {
  if (sys)
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  else
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ inline void fence(bool sys) {
  if (sys)
    __threadfence_system();
  else
    __threadfence();
}

// Bounded spinning for one thread: past the deadline it reports and raises the abort word.
//
// Who reports: the report should name the rank that is late, and any stuck waiter could win the race
// to write it. So the waits are ranked, and a lower-ranked waiter past its deadline keeps spinning for
// a grace period per rank level before it may report (it still stops at once when the abort word rises):
//   0. a rank's first block waiting for ANOTHER rank to start (names a rank that never began),
//   1. a rank's first block waiting for another rank's step,
//   2. everything else: a rank's other blocks (they wait on the same things as the first), and waits
//      on the rank's own progress (its sibling blocks, its own late start as a straggler, or another
//      channel of the same rank that a phase dep waits for: that channel's own waiter names the cause).
class Spinner {
 public:
  __device__ Spinner(const LlKernelParams& p, int rank, int program, bool firstBlock)
      : p_(p), rank_(rank), program_(program), firstBlock_(firstBlock), deadline_(globalTimer() + p.timeoutNs),
        graceNs_(p.timeoutNs / kGraceDivisor > kMinGraceNs ? p.timeoutNs / kGraceDivisor : kMinGraceNs) {}

  // Waits until *word >= target; false on timeout or abort. `waited`: the program waited for.
  __device__ bool waitAtLeast(const unsigned long long* word, unsigned long long target, int waited, int waitedStep) {
    const bool sys = p_.systemScope != 0;
    for (unsigned int i = 0; loadAcquire(word, sys) < target; ++i)
      if ((i & kCheckEvery) == kCheckEvery && !stillOk(waited, waitedStep)) return false;
    return true;
  }
  __device__ bool waitAtLeast32(const unsigned int* word, unsigned int target, int waited, int waitedStep) {
    const bool sys = p_.systemScope != 0;
    for (unsigned int i = 0; loadAcquire32(word, sys) < target; ++i)
      if ((i & kCheckEvery) == kCheckEvery && !stillOk(waited, waitedStep)) return false;
    return true;
  }

 private:
  static constexpr unsigned int kCheckEvery = 63;  // poll abort and clock every 64 spins
  // Grace per level: a quarter of the timeout (all blocks start within microseconds of each other, so
  // the preferred reporter is past its deadline long before), at least 1 ms (the clock's granularity
  // and a block's polling period are far below that). drain_bound.h holds both, so the host's wait in
  // synchronize() outlasts the last report level (kLlReportLevels: the levels 1 and 2 below).
  static constexpr unsigned long long kGraceDivisor = kLlGraceDivisor;
  static constexpr unsigned long long kMinGraceNs = kLlMinGraceNs;

  __device__ unsigned long long reportLevel(int waited, int waitedStep) const {
    if (!firstBlock_ || waited == program_ || p_.programRank[waited] == rank_) return 2;
    return waitedStep < 0 ? 0 : 1;
  }

  __device__ bool stillOk(int waited, int waitedStep) {
    if (*static_cast<volatile unsigned int*>(p_.abortFlag) != 0) return false;
    const unsigned long long now = globalTimer();
    if (now < deadline_ + reportLevel(waited, waitedStep) * graceNs_) return true;
    if (atomicCAS(p_.abortFlag, 0U, 1U) == 0U) {  // the first on this device reports
      volatile LlErrorReport* r = p_.report;
      r->rank = rank_;
      r->waitedRank = p_.programRank[waited];
      r->waitedStep = waitedStep;
      __threadfence_system();
      r->flag = 1U;
      __threadfence_system();
    }
    return false;
  }

  const LlKernelParams& p_;
  int rank_;
  int program_;
  bool firstBlock_;
  unsigned long long deadline_;
  unsigned long long graceNs_;
};

template <class E, class Op>
__global__ void __launch_bounds__(kLlThreads) lowLatencyKernel(const __grid_constant__ LlKernelParams p) {
  using S = typename E::Storage;
  __shared__ int ok;
  const int li = static_cast<int>(blockIdx.x) / p.blocksPerRank;
  const int bi = static_cast<int>(blockIdx.x) % p.blocksPerRank;
  const LlRankSlot slot = p.local[li];
  const int rank = slot.rank;  // whose buffers; its progress word is p.progress[slot.program]
  const bool sys = p.systemScope != 0;
  const unsigned long long base = p.seq << 32;
  const bool leader = bi == 0 && threadIdx.x == 0;
  Spinner spin(p, rank, slot.program, bi == 0);

  if (leader) {  // this rank starts (late, if it is the straggler)
    if (rank == p.stragglerRank) {  // arrives late, but not after the others gave up
      const unsigned long long t0 = globalTimer();
      while (globalTimer() - t0 < p.stragglerDelayNs && *static_cast<volatile unsigned int*>(p.abortFlag) == 0)
        __nanosleep(256);
    }
    storeRelease(p.progress[slot.program], base, sys);
  }

  for (int i = 0; i < slot.stepCount; ++i) {
    const LlStep s = p.steps[slot.stepBegin + i];
    if (threadIdx.x == 0) {
      bool good = spin.waitAtLeast(p.progress[slot.program], base + static_cast<unsigned>(i), slot.program, i - 1);
      for (int w = 0; good && w < s.waitCount; ++w) {
        const LlWait wait = p.waits[s.waitBegin + w];
        good = spin.waitAtLeast(p.progress[wait.program], base + static_cast<unsigned>(wait.step + 1), wait.program,
                                wait.step);
      }
      ok = good;
    }
    __syncthreads();
    if (!ok) return;
    const std::int64_t worker = std::int64_t{bi} * blockDim.x + threadIdx.x;
    const std::int64_t nworkers = std::int64_t{p.blocksPerRank} * blockDim.x;
    auto* dst = static_cast<S*>(p.base[rank][s.dstBuf]) + s.dstOff;
    const auto* src = static_cast<const S*>(p.base[s.srcRank][s.srcBuf]) + s.srcOff;
    if (s.reduce) {
      const auto* local = static_cast<const S*>(p.base[rank][s.localBuf]) + s.localOff;
      device::reduceCopy<E, Op, true>(dst, local, src, s.count, worker, nworkers);
    } else {
      device::reduceCopy<E, Op, false>(dst, nullptr, src, s.count, worker, nworkers);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      fence(sys);
      const unsigned long long done = base + static_cast<unsigned>(i + 1);
      if (p.blocksPerRank == 1) {
        storeRelease(p.progress[slot.program], done, sys);
      } else {
        atomicAdd(p.arrive + li, 1U);
        if (bi == 0 &&
            spin.waitAtLeast32(p.arrive + li, static_cast<unsigned>((i + 1) * p.blocksPerRank), slot.program, i))
          storeRelease(p.progress[slot.program], done, sys);
      }
    }
  }

  if (leader) {  // the caller may reuse this rank's buffers once its readers are done
    bool good = true;
    for (int w = 0; good && w < slot.finalCount; ++w) {
      const LlWait wait = p.waits[slot.finalBegin + w];
      good = spin.waitAtLeast(p.progress[wait.program], base + static_cast<unsigned>(wait.step + 1), wait.program,
                              wait.step);
    }
    if (p.blocksPerRank > 1) p.arrive[li] = 0;  // every block arrived at the last step
  }
}

template <class F>
void withKernel(DataType type, ReduceOp op, F&& f) {
  device::dispatchType(type, [&](auto elem) {
    device::dispatchOp(op, [&](auto opTag) { f(&lowLatencyKernel<decltype(elem), decltype(opTag)>); });
  });
}

}  // namespace

int lowLatencyMaxResidentBlocks(DataType type, ReduceOp op, int smCount) {
  int perSm = 0;
  withKernel(type, op, [&](auto kernel) {
    CCLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kLlThreads, 0));
  });
  return perSm * smCount;
}

void launchLowLatency(cudaStream_t stream, DataType type, ReduceOp op, const LlKernelParams& params,
                      LowLatencyGeometry grid) {
  const int blocks = grid.gridBlocks(params.nLocal);
  if (blocks <= 0) return;
  withKernel(type, op, [&](auto kernel) {
    void* args[] = {const_cast<LlKernelParams*>(&params)};
    CCLAB_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(blocks), dim3(grid.threads),
                                                 args, 0, stream));
    CCLAB_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace cclab::cuda
