// Hierarchical allreduce (the 2D ring of Jia et al. 2018 and NCCL's multi-node ring idea): with g ranks
// per node and N = p/g nodes, rank r = n·g + l (node n, local rank l) runs three phases:
//   0. reduce-scatter inside its node (a ring over the node's g ranks, g-1 steps): the data is cut into
//      g shards (chunkOf) and every step moves one whole shard, so afterwards local rank l holds
//      shard s = (l+1) mod g summed over its node;
//   1. allreduce of shard s with the ranks of the same local index on the other nodes (a ring over the
//      N nodes, one per local index, so each shard crosses the network through its own rank's NIC):
//      the shard is cut into N pieces, 2(N-1) steps of one piece;
//   2. allgather of the shards inside its node (g-1 steps of one whole shard).
// Each phase is pipelined in slices by the executor (slice-major inside a phase, plan.h). The node's
// rings move a shard as one op per step, so their op count (and latency, g-1 steps per slice round)
// does not grow with the node count; only the network ring has N pieces. The phases are separate
// because the network ring reads pieces of what the node ring wrote whole (validate.h's pipelining
// rule); with C channels (makePlan) every channel is a concurrent lane over its own part of the data,
// so one channel's network phase overlaps another's node phases on the same ranks.
//
// With one node (N = 1) or one rank per node (g = 1, or ranksPerNode 0) it is the flat ring.
// Cost (one channel, R₁ slice rounds per shard, R₂ per piece; sim/analytic_hierarchical.cc):
//   2(g-1)R₁α_node + 2(N-1)R₂α_net + 2(g-1)/g·nβ_node + 2(N-1)/(N·g)·nβ_net + ((g-1)/g + (N-1)/(Ng))·nγ.
#include "collectives/plan/builder.h"

namespace cclab::plan {

Plan allReduceHierarchical(int nranks, std::int64_t count, int ranksPerNode) {
  const int g = ranksPerNode;
  if (g <= 1 || g >= nranks || nranks % g != 0) {
    Plan flat = allReduceRing(nranks, count);
    flat.algorithm = Algorithm::Hierarchical;
    return flat;
  }
  const int nodes = nranks / g;
  Plan plan = build::emptyPlan(Collective::AllReduce, Algorithm::Hierarchical, nranks, count, 0, 3);
  // Shard j of the whole vector, and piece m of shard j.
  auto shard = [&](int j) { return chunkOf(count, g, build::mod(j, g)); };
  auto piece = [&](int j, int m) {
    const Chunk s = shard(j);
    const Chunk part = chunkOf(s.count, nodes, build::mod(m, nodes));
    return Chunk{s.offset + part.offset, part.count};
  };
  for (int r = 0; r < nranks; ++r) {
    build::Ops ops(plan, r);
    const int n = r / g, l = r % g;
    const int next = n * g + (l + 1) % g, prev = n * g + (l + g - 1) % g;              // inside the node
    const int up = ((n + 1) % nodes) * g + l, down = ((n + nodes - 1) % nodes) * g + l;  // across nodes
    for (int k = 0; k < g - 1; ++k) {  // 0. reduce-scatter in the node: send shard l-k, receive shard l-k-1
      const Chunk s = shard(l - k), v = shard(l - k - 1);
      ops.send(next, k == 0 ? build::in(s.offset, s.count) : build::out(s.offset, s.count), 0);
      ops.recvReduce(prev, build::in(v.offset, v.count), build::out(v.offset, v.count), 0);
    }
    const int sh = l + 1;  // 1. ring allreduce of shard l+1 across the nodes (it is in the output already)
    for (int k = 0; k < nodes - 1; ++k) {
      const Chunk s = piece(sh, n - k), v = piece(sh, n - k - 1);
      ops.send(up, build::out(s.offset, s.count), 1);
      ops.recvReduce(down, build::out(v.offset, v.count), build::out(v.offset, v.count), 1);
    }
    for (int k = 0; k < nodes - 1; ++k) {
      const Chunk s = piece(sh, n + 1 - k), v = piece(sh, n - k);
      ops.send(up, build::out(s.offset, s.count), 1);
      ops.recv(down, build::out(v.offset, v.count), 1);
    }
    for (int k = 0; k < g - 1; ++k) {  // 2. allgather in the node: send shard l+1-k, receive shard l-k
      const Chunk s = shard(l + 1 - k), v = shard(l - k);
      ops.send(next, build::out(s.offset, s.count), 2);
      ops.recv(prev, build::out(v.offset, v.count), 2);
    }
  }
  return plan;
}

}  // namespace cclab::plan
