// Link bandwidths by generation, from the specifications, for topologies read from NCCL's topology
// dump (nccl_topology.h): the dump names an NVLink's count and the GPU's SM version, a PCIe link's
// transfer rate and width, a NIC's speed; these turn them into GB/s per direction.
#pragma once

#include <optional>

#include "sim/units.h"

namespace cclab::sim::specs {

// NVLink, GB/s per link per direction, by the SM version of the GPU at its end (compute capability x10):
//   60 (P100, NVLink 1): 4 links, 160 GB/s both directions together (Tesla P100 datasheet) -> 20
//   70 (V100, NVLink 2): 6 links, 300 GB/s (Tesla V100 datasheet) -> 25
//   80 (A100, NVLink 3): 12 links, 600 GB/s (A100 datasheet) -> 25
//   86 (A40, RTX A6000, NVLink 3 bridge): 4 links, 112.5 GB/s (A40 and RTX A6000 datasheets) -> 14.0625
//   90 (H100, H200, NVLink 4): 18 links, 900 GB/s (H100 and H200 datasheets) -> 25
//   100 (B200, NVLink 5): 18 links, 1.8 TB/s (DGX B200 datasheet) -> 50
// Anything else (e.g. 89, Ada, which has no NVLink): nothing.
inline std::optional<GBps> nvlinkPerLink(int sm) {
  switch (sm) {
    case 60: return 20.0;
    case 70: return 25.0;
    case 80: return 25.0;
    case 86: return 112.5 / 4 / 2;
    case 90: return 25.0;
    case 100: return 50.0;
    default: return std::nullopt;
  }
}

// PCIe, GB/s per lane per direction, by transfer rate (GT/s): Gen1 2.5 and Gen2 5 GT/s with 8b/10b
// encoding; Gen3 8, Gen4 16 and Gen5 32 GT/s with 128b/130b (PCI Express Base Specification 3.0, 4.0,
// 5.0); Gen6 64 GT/s PAM4 in 256-byte FLITs carrying 242 bytes of TLP data (PCIe 6.0 specification).
inline std::optional<GBps> pciePerLane(double gtPerSecond) {
  if (gtPerSecond == 2.5) return 2.5 * 8 / 10 / 8;
  if (gtPerSecond == 5.0) return 5.0 * 8 / 10 / 8;
  if (gtPerSecond == 8.0) return 8.0 * 128 / 130 / 8;
  if (gtPerSecond == 16.0) return 16.0 * 128 / 130 / 8;
  if (gtPerSecond == 32.0) return 32.0 * 128 / 130 / 8;
  if (gtPerSecond == 64.0) return 64.0 / 8 * 242 / 256;
  return std::nullopt;
}

// Between two CPU sockets (NCCL's SYS path): Intel UPI at 10.4 GT/s carries 20.8 GB/s per link per
// direction, and two-socket Xeon Scalable servers join the sockets with two or three links (Intel Xeon
// Scalable platform brief); we take two: 41.6 GB/s.
inline constexpr GBps kSocketLink = 2 * 20.8;

// Latencies per traversal: the presets' estimates (sim/presets.cc): one NVLink/NVSwitch hop 0.35 µs,
// one PCIe switch 0.5 µs, NIC to fabric 1 µs; a socket-to-socket hop as a PCIe switch.
inline constexpr Micros kNvlinkLatency = 0.35;
inline constexpr Micros kPcieLatency = 0.5;
inline constexpr Micros kNicLatency = 1.0;
inline constexpr Micros kSocketLatency = 0.5;

// Link-layer payload fractions (the presets' reasoning, sim/presets.cc): NVLink 256/272, PCIe 256/280,
// InfiniBand at a 4096-byte MTU 4096/4138.
inline constexpr double kNvlinkEfficiency = 256.0 / 272.0;
inline constexpr double kPcieEfficiency = 256.0 / 280.0;
inline constexpr double kNicEfficiency = 4096.0 / 4138.0;

// GPU memory bandwidth (the reduction's rate; a copy at half) by PCI device id, from the datasheets:
// H100 SXM5 80GB (0x2330) 3.35 TB/s, H200 SXM (0x2335) 4.8 TB/s, A100 SXM4 80GB (0x20b2) 2,039 GB/s,
// A100 SXM4 40GB (0x20b0) 1,555 GB/s, A100 80GB PCIe (0x20b5) 1,935 GB/s, V100 SXM2 16/32GB (0x1db1,
// 0x1db5) 900 GB/s.
inline std::optional<GBps> gpuMemoryBandwidth(unsigned pciDevice) {
  switch (pciDevice) {
    case 0x2330: return 3350.0;
    case 0x2335: return 4800.0;
    case 0x20b2: return 2039.0;
    case 0x20b0: return 1555.0;
    case 0x20b5: return 1935.0;
    case 0x1db1:
    case 0x1db5: return 900.0;
    default: return std::nullopt;
  }
}

// NVLink SHARP on NVSwitch gen 3 (Hopper systems): 450 GB/s allreduce bandwidth of the 8-GPU system
// (Ishii & Wells, "The NVLink-Network Switch", Hot Chips 34, 2022), as the dgx-h100 preset.
inline constexpr GBps kNvlsHopper = 450;

// Kernel launch per collective and NIC proxy per network message: the presets' values (presets.cc).
inline constexpr Micros kKernelLaunch = 3.25;
inline constexpr Micros kProxyPerMessage = 2 * kPcieLatency;

}  // namespace cclab::sim::specs
