// Preset topologies; every number's source is named next to it.
#include "sim/presets.h"

namespace cclab::sim {
namespace {

// Link-class efficiencies: the payload fraction of each link layer's packets, from its format (first
// principles; what the wire carries besides data). Protocol overheads (LL vs Simple) are modelled per
// collective call by the replay and the analytic model alike (topology.h, protocol.h, ll_protocol),
// not folded in here.
// The presets' topology-wide protocol_efficiency is 1: no factor is taken from measured busbw tables.
//
// H100 SXM: 18 NVLink4 links x 25 GB/s per direction = 450 GB/s per GPU per direction (NVIDIA H100
// datasheet); one NVSwitch hop is ~0.35 µs each way, ~0.7 µs per message end to end (our estimate).
constexpr GBps kNvlinkH100 = 450;
constexpr Micros kNvlinkLatency = 0.35;
// NVLink packets: a 16-byte header flit per up to 16 data flits (256 bytes) of payload (the NVLink
// packet format as described for NVLink 1 by Foley & Danskin, "Ultra-Performance Pascal GPU and NVLink
// Interconnect", IEEE Micro 2017; assumed unchanged in NVLink 4): 256 / 272.
constexpr double kNvlinkEfficiency = 256.0 / 272.0;
// Reduction fused with the copy (NCCL's recv-reduce-send) runs near HBM3 speed, 3.35 TB/s (datasheet);
// we charge the output bytes at that rate.
constexpr GBps kH100Reduce = 3350;
constexpr GBps kH100Copy = 3350 / 2.0;  // a copy reads and writes HBM
// PCIe line rates per direction, x16: Gen4 16 GT/s, Gen5 32 GT/s per lane, 128b/130b encoding (PCIe
// 4.0 / 5.0 base specifications): 16 lanes x 16 GT/s x 128/130 / 8 = 31.5 GB/s; Gen5 twice that.
// ~0.5 µs per switch traversal (our estimate).
constexpr GBps kPcieGen4 = 16 * 16.0 * 128 / 130 / 8;
constexpr GBps kPcieGen5 = 2 * kPcieGen4;
constexpr Micros kPcieLatency = 0.5;
// A PCIe write TLP of 256 bytes (the usual max payload size) carries 24 bytes more: the 4-byte STP
// framing token, a 16-byte header (4 DW, 64-bit address) and a 4-byte LCRC (PCIe base specification,
// transaction and data link layers); ACK and flow-control DLLPs are left out: 256 / 280.
constexpr double kPcieEfficiency = 256.0 / 280.0;
// ConnectX-7 400 Gb/s = 50 GB/s per NIC, data rate (NVIDIA datasheet; DGX H100 has 8, one per GPU);
// ~1 µs per NIC-to-fabric traversal (RDMA write latency as reported by perftest, order of magnitude).
constexpr GBps kNic400G = 50;
constexpr Micros kNicLatency = 1.0;
// InfiniBand at a 4096-byte MTU: LRH 8 + BTH 12 + RETH 16 + ICRC 4 + VCRC 2 = 42 bytes of headers per
// packet (InfiniBand Architecture Specification vol. 1, packet format; RETH counted on every packet,
// an upper bound on the overhead): 4096 / 4138.
constexpr double kNicEfficiency = 4096.0 / 4138.0;
// Start-up per collective. Kernel launch: 80 dependent small kernels ran in 260 µs from a stream,
// 3.25 µs each (CUDA.jl documentation, "Graphs"; recorded with its source in
// docs/results/gpu-h200-predicted.md). NIC proxy (first principles): the GPU posts the work to host
// memory (one PCIe traversal), the proxy thread sees it and rings the NIC's doorbell (another).
constexpr Micros kKernelLaunch = 3.25;
// NIC proxy, paid by every message that crosses a NIC (replay.cc, connectionId): the GPU posts the
// work to host memory (one PCIe traversal), the proxy thread sees it and rings the NIC's doorbell
// (another): 1 µs. NCCL's tuner charges the same 1 µs per network step on Intel x86 hosts, the CPUs of
// DGX H100/A100 (src/graph/tuning.cc, getNetOverhead: 1 µs Intel, 2 µs AMD).
constexpr Micros kProxyPerMessage = 2 * kPcieLatency;
// A100 SXM4: 12 NVLink3 links x 25 GB/s per direction = 300 GB/s per GPU per direction (NVIDIA A100
// datasheet: 600 GB/s NVLink); NVSwitch gen 2 (DGX A100) has no in-switch reduction. HBM2e 2,039 GB/s
// (A100 80GB SXM datasheet), reduction charged at that rate, a copy at half.
constexpr GBps kNvlinkA100 = 300;
constexpr GBps kA100Reduce = 2039;
constexpr GBps kA100Copy = 2039 / 2.0;
// H200 SXM: the same 18 NVLink4 links as H100 (900 GB/s total, H200 datasheet), HBM3e 4.8 TB/s (H200
// datasheet).
constexpr GBps kH200Reduce = 4800;
constexpr GBps kH200Copy = 4800 / 2.0;
// ConnectX-6 HDR 200 Gb/s = 25 GB/s per NIC (NVIDIA datasheet; DGX A100 has 8 for compute traffic, one
// per GPU: DGX A100 user guide, network ports).
constexpr GBps kNic200G = 25;
// NVLink SHARP (NVLS) on NVSwitch gen 3 (DGX H100/H200): the switch reduces and multicasts; NVIDIA
// gives the 8-GPU system's allreduce bandwidth as 450 GB/s (A. Ishii, R. Wells, "The NVLink-Network
// Switch: NVIDIA's Switch Chip for High Communication-Bandwidth SuperPODs", Hot Chips 34, 2022,
// slide "Server generations": DGX H100 450 GB/s AllReduce BW, DGX A100 150 GB/s). We take it as the
// switch's own rate (bytes of the vector per second), the bound NVLS never beats (analytic_nvls.cc).
constexpr GBps kNvlsH100 = 450;
// Compute capability (CUDA programming guide, compute capabilities table): A100 8.0, H100/H200 9.0.
constexpr int kSm80 = 80;
constexpr int kSm90 = 90;
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

// One NVSwitch node of 8 GPUs (DGX/HGX): LL128 on (NVLink, sm_70+: NCCL's enable rule).
TopologySpec nvswitchNode(const char* name, GBps nvlink, GBps reduce, GBps copy, int cc, GBps nvls) {
  TopologySpec s;
  s.name = name;
  s.kind = TopologyKind::Switch;
  s.ranks = 8;
  s.llProtocol = true;
  s.ll128Protocol = true;
  s.computeCapability = cc;
  s.nvlsBandwidth = nvls;
  s.classes["link"] = {kNvlinkLatency, nvlink, kNvlinkEfficiency};
  s.compute = {reduce, copy, 0, 0, kKernelLaunch};
  return s;
}

TopologySpec pcieNode() {
  TopologySpec s;
  s.name = "pcie";
  s.kind = TopologyKind::Pcie;
  s.ranks = 8;
  s.gpusPerSwitch = 4;
  s.llProtocol = true;  // no LL128: NCCL runs it over NVLink only
  s.classes["pcie"] = {kPcieLatency, kPcieGen4, kPcieEfficiency};
  s.classes["uplink"] = {kPcieLatency, kPcieGen4, kPcieEfficiency};
  s.compute = {kH100Reduce, kH100Copy, 0, 0, kKernelLaunch};
  return s;
}

// Nodes of 8 GPUs on an NVSwitch with `nics` NICs each, on a non-blocking fabric.
TopologySpec clusterOf(const char* name, const TopologySpec& node, int nics, GBps nic, GBps pcie) {
  TopologySpec s;
  s.name = name;
  s.kind = TopologyKind::Cluster;
  s.nodes = 4;
  s.gpusPerNode = 8;
  s.nicsPerNode = nics;
  s.ranks = 32;
  s.llProtocol = true;
  s.ll128Protocol = node.ll128Protocol;
  s.computeCapability = node.computeCapability;
  s.nvlsBandwidth = node.nvlsBandwidth;
  s.classes["intra"] = node.classes.at("link");
  s.classes["pcie"] = {kPcieLatency, pcie, kPcieEfficiency};
  s.classes["nic"] = {kNicLatency, nic, kNicEfficiency};
  s.compute = node.compute;
  s.compute.proxyLatency = kProxyPerMessage;
  return s;
}

TopologySpec dgxA100() { return nvswitchNode("dgx-a100", kNvlinkA100, kA100Reduce, kA100Copy, kSm80, 0); }
TopologySpec dgxH100() { return nvswitchNode("dgx-h100", kNvlinkH100, kH100Reduce, kH100Copy, kSm90, kNvlsH100); }
TopologySpec dgxH200() { return nvswitchNode("dgx-h200", kNvlinkH100, kH200Reduce, kH200Copy, kSm90, kNvlsH100); }

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

// "cluster": DGX H100 nodes, 8 ConnectX-7 400G NICs each (one per GPU; DGX H100 user guide), PCIe Gen5.
// "cluster-4nic": the same nodes with 4 of those NICs, each shared by two GPUs.
// "cluster-a100": DGX A100 nodes, 8 ConnectX-6 200G NICs each, PCIe Gen4.
std::vector<std::string> presetNames() {
  return {"dgx-h100", "dgx-h200", "dgx-a100", "pcie", "cluster", "cluster-4nic", "cluster-a100", "host"};
}

std::optional<TopologySpec> findPreset(const std::string& name) {
  if (name == "dgx-h100") return dgxH100();
  if (name == "dgx-h200") return dgxH200();
  if (name == "dgx-a100") return dgxA100();
  if (name == "pcie") return pcieNode();
  if (name == "cluster") return clusterOf("cluster", dgxH100(), 8, kNic400G, kPcieGen5);
  if (name == "cluster-4nic") return clusterOf("cluster-4nic", dgxH100(), 4, kNic400G, kPcieGen5);
  if (name == "cluster-a100") return clusterOf("cluster-a100", dgxA100(), 8, kNic200G, kPcieGen4);
  if (name == "host") return host();
  return std::nullopt;
}

}  // namespace cclab::sim
