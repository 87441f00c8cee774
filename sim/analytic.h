// Analytic model: closed α-β-γ forms per algorithm, for quick tables and crossovers.
//
// Each formula is the cost of the *same schedule* the plan generator writes and the executors run
// (slice-major inside a phase, sends that do not occupy the sender, receive-reduce charged γ per byte
// to the receiver, local copies δ per byte), on a topology where every message sees the same α and β
// and no two messages share a link (the textbook model: fully connected, or a switch with one flow in
// and one out per rank). Under those assumptions, with counts that split evenly into chunks and
// slices, replay() of the plan gives the same time (tests/sim/closed_form_test.cc, relative 1e-9);
// formulas marked "pipelined approximation" are exact for one slice per op only.
// One family per file (analytic_ring.cc, analytic_tree.cc, analytic_rhd.cc, analytic_chain.cc,
// analytic_direct.cc, analytic_hierarchical.cc); each names its sources.
#pragma once

#include <cstdint>

#include "collectives/plan/plan.h"
#include "sim/units.h"

namespace cclab::sim {

struct CostParams {
  Micros alpha = 0;         // per message: route latency
  MicrosPerByte beta = 0;   // per byte on the wire (1 / bandwidth)
  MicrosPerByte gamma = 0;  // per byte reduced by the receiver
  MicrosPerByte delta = 0;  // per byte copied locally
  Micros startup = 0;       // once per collective: the launch, topology.h ComputeParams
  MicrosPerByte betaHop = 0;  // per byte of one message alone on its route (the slowest route of the
                              // pattern, unshared): a pipeline's fill, before its flows share links
  // Rings whose edges differ (a cluster: 1 edge in G crosses a NIC) or whose channels share a resource:
  // the mean inverse bandwidth of a message alone on its route along the ring (α is then the mean
  // latency), while beta stays the busiest resource's share; the ring forms take the longer of the
  // critical chain (at the means) and the busiest resource's occupancy (at beta). Negative: the same as
  // beta (every edge alike; the forms as before).
  MicrosPerByte chainBeta = -1;
};

// What is run: the NCCL API's count (see plan::bufferCounts), the element size, and the executor's
// slice size in elements (0 or negative: every op is one slice).
struct Schedule {
  plan::Collective collective = plan::Collective::AllReduce;
  plan::Algorithm algorithm = plan::Algorithm::Ring;
  int nranks = 1;
  std::int64_t count = 0;
  std::int64_t elemSize = 4;
  std::int64_t sliceElems = 0;
  int ranksPerNode = 0;  // hier, tree: ranks per node (0, 1 or not dividing nranks: one node)
};

// Predicted time in µs (the closed form plus k.startup); throws cclab::InvalidArgument for a
// combination without a generator.
Micros predict(const Schedule& s, const CostParams& k);

// The largest op of the plan the generator writes, in elements (what auto slicing looks at).
std::int64_t maxOpElems(plan::Collective c, plan::Algorithm a, int nranks, std::int64_t count, int ranksPerNode = 0);
// Auto slice size as replay() picks it (replay.h kAutoSlicesPerOp, kMinAutoSliceBytes).
std::int64_t autoSliceElems(plan::Collective c, plan::Algorithm a, int nranks, std::int64_t count, std::int64_t elemSize,
                            int ranksPerNode = 0);
// NCCL's tree (Simple) pipelines every channel's data in chunks of one protocol step, 512 KiB (its
// Simple buffer, 4 MiB, over NCCL_STEPS = 8: kMinAutoSliceBytes), and halves the chunk while a channel
// has fewer than depth x 8 chunks (down to 128 KiB), depth x 4 (64 KiB) or depth (32 KiB), depth =
// ranks per node - 1 + floor(log2 nodes) (NVIDIA/nccl src/enqueue.cc, the chunk size of
// ncclPatternTreeUpDown; src/graph/connect.cc, the tree's depth). The tree's auto slice, in elements
// (both models): `count` elements of the whole call over `channels` parts on p ranks of g per node.
std::int64_t ncclTreeChunkElems(std::int64_t count, std::int64_t elemSize, int channels, int p, int ranksPerNode);
// hier runs as the flat ring unless 1 < ranksPerNode < nranks divides nranks (allreduce_hierarchical.cc).
bool isTwoLevel(int nranks, int ranksPerNode);

// nccl-tests' conventions (doc/PERFORMANCE.md): the "size" column in bytes for a count (busbw factors:
// collectives/conventions/bandwidth.h).
Bytes reportedBytes(plan::Collective c, int nranks, std::int64_t count, std::int64_t elemSize);

// --- per family (n: bytes, chunkBytes: a ring chunk in bytes, count: elements, e: element size,
// slice: slice elements, rounds: slice rounds per op, k: the cost parameters) ---
// analytic_ring.cc
Micros ringAllReduce(int p, Bytes chunkBytes, std::int64_t rounds, const CostParams& k);
Micros ringReduceScatter(int p, Bytes chunkBytes, std::int64_t rounds, const CostParams& k);
Micros ringAllGather(int p, Bytes chunkBytes, std::int64_t rounds, const CostParams& k);
// analytic_tree.cc
Micros treeAllReduce(int p, Bytes n, std::int64_t rounds, const CostParams& k);  // flat-tree
// NCCL's tree (allreduce_tree.cc) on one channel's part of n bytes: g ranks per node (0: one node),
// `blocks` blocks of `rounds` slices each (a pipelined approximation, analytic_tree.cc).
Micros ncclTreeAllReduce(int p, int g, Bytes n, int blocks, std::int64_t rounds, const CostParams& k);
Micros doubleBinaryTreeAllReduce(int p, Bytes n, std::int64_t rounds, const CostParams& k);
Micros treeBroadcast(int p, Bytes n, std::int64_t rounds, const CostParams& k);
Micros treeReduce(int p, Bytes n, std::int64_t rounds, const CostParams& k);
// analytic_rhd.cc (count in elements: the step sizes halve blocks of whole elements)
Micros halvingDoublingAllReduce(int p, std::int64_t count, std::int64_t e, std::int64_t slice,
                                const CostParams& k);
// Recursive doubling allreduce (allreduce_rd.cc): log2(q) whole-vector exchanges, a final copy,
// and the fold/unfold of the p - q extra ranks (exact for p a power of two, else an upper bound).
Micros recursiveDoublingAllReduce(int p, std::int64_t count, std::int64_t e, std::int64_t slice,
                                  const CostParams& k);
// analytic_direct.cc (one-shot: n the whole vector; two-shot: chunkBytes = n/p)
Micros oneShotAllReduce(int p, Bytes n, std::int64_t rounds, const CostParams& k);
Micros twoShotAllReduce(int p, Bytes chunkBytes, std::int64_t rounds, const CostParams& k);
// analytic_nvls.cc: NVLS allreduce of n bytes on g GPUs of one NVSwitch that reduces at
// `switchBandwidth` (k.alpha: a GPU-to-GPU route's latency, k.beta: a GPU port's inverse bandwidth);
// Simple only. Never below n / switchBandwidth nor n(1 + 1/g) at the port's bandwidth.
Micros nvlsAllReduce(int g, Bytes n, const CostParams& k, GBps switchBandwidth);
// The same across `nodes` nodes of g GPUs: NVLS in each node, each GPU's shard allreduced by a ring over
// the nodes through its NIC (net: one GPU's share of its node's NICs, one traversal's α), streamed:
// the slowest of port, switch and NIC, plus every stage's latency.
Micros nvlsAllReduceAcross(int g, int nodes, Bytes n, const CostParams& node, const CostParams& net, GBps switchBandwidth);
// analytic_chain.cc
Micros chainBroadcast(int p, Bytes n, std::int64_t rounds, const CostParams& k);
Micros chainReduce(int p, Bytes n, std::int64_t rounds, const CostParams& k);

// analytic_hierarchical.cc: allreduce on nodes x gpus: hier-ring is the hier plan's three pipelined
// phases (rounds: slice rounds per shard of n/gpus and per piece of n/(gpus·nodes)); hier-tree (no plan, analytic only)
// reduce-scatters in the node, tree-allreduces each 1/gpus shard across nodes, allgathers in the node.
struct HierarchicalParams {
  CostParams intra;  // GPU to GPU inside a node
  CostParams inter;  // one GPU's share of its node's NICs, node to node
};
struct HierarchicalRounds {
  std::int64_t shard = 1;   // slice rounds of a node-ring op (one block's shard)
  std::int64_t piece = 1;   // slice rounds of a network-ring op (one block's piece)
  std::int64_t blocks = 1;  // blocks the lanes pipeline (plan::hierarchicalBlocks)
};
// The rounds and blocks of the hier plan on one channel's part of `count` elements (g ranks per
// node, N nodes, slices of `slice` elements, <= 0: whole ops), as allreduce_hierarchical.cc cuts it
// into `blocks` blocks (0: plan::hierarchicalBlocks(count, g, nodes); one node or one GPU: 1).
HierarchicalRounds hierarchicalRounds(std::int64_t count, int g, int nodes, std::int64_t slice, int blocks = 0);
Micros hierarchicalAllReduce(int nodes, int gpus, Bytes n, HierarchicalRounds rounds, plan::Algorithm inter,
                             const HierarchicalParams& h);

}  // namespace cclab::sim
