// NVLS (NVLink SHARP) allreduce on one NVSwitch node (analytic only: no plan runs it; NCCL's NVLS
// kernels use the switch's multicast memory, which no executor of ours has).
//
// The schedule (NCCL's NVLS allreduce, as its tuner describes it: src/graph/tuning.cc, "AllReduce
// pipelines two operations"; the PTX ISA's multimem.ld_reduce and multimem.st): each of the G GPUs
// owns a shard of n/G bytes.
//  - reduce-scatter in the switch: GPU g loads its shard with multimem.ld_reduce; the switch reads
//    that shard from every GPU (each GPU's port sends n/G per shard, n for all G shards) and returns
//    the sum (n/G into GPU g);
//  - allgather by multicast: GPU g stores its reduced shard once (n/G out), the switch writes it to
//    every GPU (each GPU's port receives n/G per shard, n in all).
// Per GPU port and direction that is n + n/G bytes, the two halves pipelined (a shard is multicast
// as soon as it is reduced), and the switch reduces the whole vector once, at its own rate
// (TopologySpec::nvlsBandwidth, cited with the presets). The time is the slower of the two bounds, plus
// the latency of one reduce round trip (2 route latencies: the load to the switch and the reduced data
// back) and one Simple multicast store (kSimpleLatencyTraversals route latencies: the data, its
// completion, the flag): NVLS runs Simple only (protocol.h, kNvlsProtocols).
#include "sim/analytic.h"

#include <algorithm>

#include "collectives/core/errors.h"
#include "sim/topology.h"

namespace cclab::sim {

Micros nvlsAllReduce(int g, Bytes n, const CostParams& k, GBps switchBandwidth) {
  if (g < 1 || switchBandwidth <= 0) throw InvalidArgument("nvls: needs ranks on an NVSwitch that reduces (nvls_gbps > 0)");
  if (g == 1) return k.startup;
  const double bytes = static_cast<double>(n);
  const Micros port = bytes * (1.0 + 1.0 / g) * k.beta;
  const Micros switchTime = bytes * inverseBandwidth(switchBandwidth);
  return k.startup + (2 + kSimpleLatencyTraversals) * k.alpha + std::max(port, switchTime);
}

// Across N nodes: the reduced shard of GPU g (n/G bytes) is allreduced with the shards of the GPUs of
// the same local index on the other nodes before it is multicast, by a ring over the nodes through
// each GPU's NIC (2(N-1)/N of the shard out and in; 2(N-1) steps of Simple latency; NCCL's NVLS tree
// runs a tree there instead: the same bytes on 2 nodes, fewer steps beyond). The three stages stream
// shard by shard, so the bytes take the slowest of the port, the switch and the NIC.
Micros nvlsAllReduceAcross(int g, int nodes, Bytes n, const CostParams& node, const CostParams& net, GBps switchBandwidth) {
  if (nodes <= 1) return nvlsAllReduce(g, n, node, switchBandwidth);
  if (g < 1 || switchBandwidth <= 0) throw InvalidArgument("nvls: needs ranks on an NVSwitch that reduces (nvls_gbps > 0)");
  const double bytes = static_cast<double>(n);
  const Micros port = g > 1 ? bytes * (1.0 + 1.0 / g) * node.beta : 0.0;
  const Micros switchTime = g > 1 ? bytes * inverseBandwidth(switchBandwidth) : 0.0;
  const Micros network = 2.0 * (nodes - 1) / nodes * (bytes / g) * net.beta;
  const Micros latency = (g > 1 ? (2 + kSimpleLatencyTraversals) * node.alpha : 0.0) +
                         2.0 * (nodes - 1) * kSimpleLatencyTraversals * net.alpha;
  return std::max(node.startup, net.startup) + latency + std::max({port, switchTime, network});
}

}  // namespace cclab::sim
