// Launch geometry of the reduce-copy kernels, as pure functions of sizes and device properties
// (unit-tested on the CPU).
//
// Each thread moves 16-byte packs and keeps kUnroll of them in flight per source, so one block
// iteration covers kThreads * 16 * kUnroll bytes. A standalone kernel gets enough blocks to cover its
// bytes once, at most kBlocksPerSm blocks per multiprocessor shared among the device's ranks (K virtual
// ranks on one GPU run their kernels side by side). The low-latency kernel gives each rank of a device
// the same number of blocks, all resident at once (its blocks wait for each other).
#pragma once

#include <cstddef>
#include <cstdint>

namespace cclab::cuda {

inline constexpr int kThreads = 512;          // threads per block: 16 warps hide load latency
inline constexpr int kPackBytes = 16;         // one vector load or store (uint4)
inline constexpr int kUnroll = 4;             // independent 16-byte loads in flight per source
inline constexpr int kBlocksPerSm = 2;        // 2 x 512 threads: half of an H100/H200 SM's 2048
// The low-latency kernel's blocks: 256 threads leave it 255 registers a thread (no spills with both
// its copy and reduce paths inlined); it scales with blocks per rank instead.
inline constexpr int kLlThreads = 256;
inline constexpr std::int64_t kBlockIterBytes = std::int64_t{kThreads} * kPackBytes * kUnroll;  // 32 KiB
// The low-latency kernel adds a block for each this many bytes of its largest step: below it one
// block's handshake costs less than splitting the work.
inline constexpr std::int64_t kLlBytesPerBlock = 256 * 1024;

struct LaunchGeometry {
  int blocks = 0;  // 0: nothing to launch
  int threads = kThreads;
};

// Grid for one standalone reduce-copy of `bytes` on a device with `smCount` multiprocessors that
// `ranksOnDevice` ranks share.
LaunchGeometry reduceCopyGeometry(std::int64_t bytes, int smCount, int ranksOnDevice);

struct LowLatencyGeometry {
  int blocksPerRank = 1;
  int threads = kLlThreads;
  [[nodiscard]] int gridBlocks(int ranksOnDevice) const { return blocksPerRank * ranksOnDevice; }
};

// Blocks per rank for the persistent low-latency kernel: enough for its largest step, with every
// block of the device's ranks resident at once (`maxResidentBlocks`, from the occupancy calculator).
// Throws InvalidArgument when even one block per rank does not fit.
LowLatencyGeometry lowLatencyGeometry(std::int64_t maxStepBytes, int ranksOnDevice, int maxResidentBlocks);

}  // namespace cclab::cuda
