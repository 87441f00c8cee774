// Preset topologies; every number's source is named next to it.
#include "sim/presets.h"

namespace cclab::sim {
namespace {

// NCCL's "Simple" protocol reaches ~85% of the NVLink/NIC line rate for large messages (NCCL tuning
// tables in src/graph/tuning.cc use comparable per-protocol bandwidth factors; nccl-tests report busbw
// ~380 GB/s of 450 on DGX H100 without NVLS).
constexpr double kSimpleProtocolEfficiency = 0.85;

// H100 SXM: 18 NVLink4 links x 25 GB/s per direction = 450 GB/s per GPU per direction (NVIDIA H100
// datasheet); one NVSwitch hop is ~0.35 µs each way, ~0.7 µs per message end to end (our estimate).
constexpr GBps kNvlinkH100 = 450;
constexpr Micros kNvlinkLatency = 0.35;
// Reduction fused with the copy (NCCL's recv-reduce-send) runs near HBM3 speed, 3.35 TB/s (datasheet);
// we charge the output bytes at that rate.
constexpr GBps kH100Reduce = 3350;
constexpr GBps kH100Copy = 3350 / 2.0;  // a copy reads and writes HBM
// PCIe Gen4 x16: 32 GB/s raw, ~25 GB/s achievable per direction; ~1 µs per switch traversal.
constexpr GBps kPcieGen4 = 25;
constexpr Micros kPcieLatency = 0.5;
// ConnectX-7 400 Gb/s = 50 GB/s per NIC (DGX H100 has 8, one per GPU); ~2 µs NIC-to-NIC through one
// switch layer (RDMA write latency as reported by perftest, order of magnitude).
constexpr GBps kNic400G = 50;
constexpr Micros kNicLatency = 1.0;
// PCIe Gen5 x16 between GPU and NIC: ~55 GB/s achievable.
constexpr GBps kPcieGen5 = 55;
// Host backend on this project's 2-core VM: ~51 GB/s total copy bandwidth with 2 threads (measured
// with memcpy by the foundation), i.e. ~25.5 GB/s per thread; ~1 µs per message for the flag handshake
// (an estimate, replaced by calibration: docs/results/sim.md).
constexpr GBps kHostMemory = 51;
constexpr GBps kHostThread = 25.5;
constexpr Micros kHostLatency = 0.5;
constexpr GBps kHostReduce = 8;  // float sum, one core, output bytes per second (estimate)
constexpr int kHostCores = 2;
// More threads than cores: a waiting rank blocks (a futex wait, collectives/host/wait.cc) and the OS
// wakes it, ~10 µs per message (futex wake + context switch on a loaded VM; an estimate, replaced by
// calibration).
constexpr Micros kHostWake = 10;

TopologySpec dgxH100() {
  TopologySpec s;
  s.name = "dgx-h100";
  s.kind = TopologyKind::Switch;
  s.ranks = 8;
  s.protocolEfficiency = kSimpleProtocolEfficiency;
  s.classes["link"] = {kNvlinkLatency, kNvlinkH100};
  s.compute = {kH100Reduce, kH100Copy, 0};
  return s;
}

TopologySpec pcieNode() {
  TopologySpec s;
  s.name = "pcie";
  s.kind = TopologyKind::Pcie;
  s.ranks = 8;
  s.gpusPerSwitch = 4;
  s.protocolEfficiency = kSimpleProtocolEfficiency;
  s.classes["pcie"] = {kPcieLatency, kPcieGen4};
  s.classes["uplink"] = {kPcieLatency, kPcieGen4};
  s.compute = {kH100Reduce, kH100Copy, 0};
  return s;
}

TopologySpec cluster() {
  TopologySpec s;
  s.name = "cluster";
  s.kind = TopologyKind::Cluster;
  s.nodes = 4;
  s.gpusPerNode = 8;
  s.nicsPerNode = 8;
  s.ranks = 32;
  s.protocolEfficiency = kSimpleProtocolEfficiency;
  s.classes["intra"] = {kNvlinkLatency, kNvlinkH100};
  s.classes["pcie"] = {kPcieLatency, kPcieGen5};
  s.classes["nic"] = {kNicLatency, kNic400G};
  s.compute = {kH100Reduce, kH100Copy, 0};
  return s;
}

TopologySpec host() {
  TopologySpec s;
  s.name = "host";
  s.kind = TopologyKind::Host;
  s.ranks = 2;
  s.protocolEfficiency = 1.0;
  s.classes["thread"] = {kHostLatency, kHostThread};
  s.classes["memory"] = {0.0, kHostMemory};
  s.compute = {kHostReduce, kHostThread, kHostCores, kHostWake};
  return s;
}

}  // namespace

std::vector<std::string> presetNames() { return {"dgx-h100", "pcie", "cluster", "host"}; }

std::optional<TopologySpec> findPreset(const std::string& name) {
  if (name == "dgx-h100") return dgxH100();
  if (name == "pcie") return pcieNode();
  if (name == "cluster") return cluster();
  if (name == "host") return host();
  return std::nullopt;
}

}  // namespace cclab::sim
