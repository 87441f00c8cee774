// The low-latency ordering's persistent kernel: its device handles and its host entry points.
//
// One cooperative launch per device runs every step of every program (a rank's channel, lowering.h)
// on that device. Each program owns blocksPerRank blocks (so a rank's channels run on separate
// blocks, side by side); before a step its blocks wait (thread 0 spinning) until their own program's
// previous step and the step's waits (lowering.h) have completed, read from per-program progress words
// in device memory; after the step the program's leader block publishes progress = (seq << 32) |
// (step + 1) with release semantics once every block of the program arrived. seq grows by one per call, so words
// never need a reset between calls. Every spin is bounded by %globaltimer: past the timeout the
// block records who it waited for in a host-mapped report, raises the device's abort word (which
// the other spinning blocks poll) and returns; the host turns the report into a TimeoutError.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "collectives/core/dtype.h"
#include "collectives/cuda/launch_geometry.h"

namespace cclab::cuda {

inline constexpr int kMaxLlRanks = 32;     // kernel parameters hold per-rank pointers by value
inline constexpr int kMaxLlPrograms = 64;  // and per-program slots and progress words

struct LlStep {
  std::int64_t dstOff = 0, localOff = 0, srcOff = 0, count = 0;  // elements
  std::int32_t srcRank = 0;
  std::int32_t waitBegin = 0;  // into the device's LlWait table
  std::int32_t waitCount = 0;
  std::uint8_t reduce = 0;     // 0: dst = src; 1: dst = local (op) src
  std::uint8_t dstBuf = 0, localBuf = 0, srcBuf = 0;  // plan::Buf
};
struct LlWait {
  std::int32_t program = 0;
  std::int32_t step = 0;  // -1: the program's start
};
struct LlRankSlot {  // one program (a rank's channel) of this device
  std::int32_t rank = 0;
  std::int32_t program = 0;  // its progress word
  std::int32_t stepBegin = 0, stepCount = 0;    // into the device's LlStep table
  std::int32_t finalBegin = 0, finalCount = 0;  // into the LlWait table
};
struct LlErrorReport {  // host-mapped, one per device; the first block of the device that times out fills it
  unsigned int flag = 0;
  int rank = -1;
  int waitedRank = -1;
  int waitedStep = 0;  // a step of the waited rank's program (its channel's own numbering)
};

struct LlKernelParams {
  const LlStep* steps = nullptr;
  const LlWait* waits = nullptr;
  LlRankSlot local[kMaxLlPrograms] = {};
  int nLocal = 0;                                     // programs on this device
  int blocksPerRank = 1;                              // blocks per program
  unsigned long long* progress[kMaxLlPrograms] = {};  // by global program; peers' words via peer access
  int programRank[kMaxLlPrograms] = {};               // the rank of each global program (for reports)
  unsigned int* arrive = nullptr;                     // by local index, this device
  unsigned int* abortFlag = nullptr;               // this device
  LlErrorReport* report = nullptr;                 // this device's, a device pointer to host-mapped memory
  void* base[kMaxLlRanks][3] = {};                 // by global rank, by plan::Buf
  unsigned long long seq = 0;
  unsigned long long timeoutNs = 0;
  int stragglerRank = -1;
  unsigned long long stragglerDelayNs = 0;
  int systemScope = 0;  // ranks on several devices: fences and flags at system scope
};
static_assert(std::is_trivially_copyable_v<LlKernelParams>);
static_assert(sizeof(LlKernelParams) <= 4096, "kernel parameters are limited to 4 KiB");

// Blocks of the low-latency kernel for (type, op) that fit on the device at once.
int lowLatencyMaxResidentBlocks(DataType type, ReduceOp op, int smCount);

// Cooperative launch (all blocks resident: they wait for each other) of grid.gridBlocks(nLocal).
void launchLowLatency(cudaStream_t stream, DataType type, ReduceOp op, const LlKernelParams& params,
                      LowLatencyGeometry grid);

}  // namespace cclab::cuda
