// Hierarchical allreduce (the 2D ring of Jia et al. 2018 and NCCL's multi-node ring idea): with g ranks
// per node and N = p/g nodes, rank r = n·g + l (node n, local rank l)
//   1. reduce-scatters the data inside its node (a ring over the node's g ranks): afterwards local
//      rank l holds shard s = (l+1) mod g summed over its node;
//   2. allreduces shard s with the ranks of the same local index on the other nodes (a ring over the
//      N nodes, one per local index, so each shard crosses the network through its own rank's NIC);
//   3. allgathers the shards inside its node.
// All three are one phase, so an executor pipelines slices through them: a slice of a shard goes on
// the network as soon as the node has reduced it. For that, every op works on whole "pieces": the data
// is cut into g shards (chunkOf) and each shard into N pieces; the node's ring moves a shard as N ops,
// the network ring moves one piece per op, and a piece is always read where it was written
// (validate.h's pipelining rule).
//
// With one node (N = 1) or one rank per node (g = 1, or ranksPerNode 0) it is the flat ring.
// Cost: 2(g-1)α_node + 2(N-1)α_net + 2(g-1)/g·nβ_node + 2(N-1)/(N·g)·nβ_net (+ reductions).
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
  Plan plan = build::emptyPlan(Collective::AllReduce, Algorithm::Hierarchical, nranks, count);
  // Piece m of shard j, in elements of the whole vector.
  auto piece = [&](int j, int m) {
    const Chunk shard = chunkOf(count, g, build::mod(j, g));
    const Chunk part = chunkOf(shard.count, nodes, build::mod(m, nodes));
    return Chunk{shard.offset + part.offset, part.count};
  };
  for (int r = 0; r < nranks; ++r) {
    build::Ops ops(plan, r);
    const int n = r / g, l = r % g;
    const int next = n * g + (l + 1) % g, prev = n * g + (l + g - 1) % g;              // inside the node
    const int up = ((n + 1) % nodes) * g + l, down = ((n + nodes - 1) % nodes) * g + l;  // across nodes
    // 1. Reduce-scatter in the node, shard by shard, every shard as its N pieces.
    for (int k = 0; k < g - 1; ++k)
      for (int m = 0; m < nodes; ++m) {  // send a piece, receive a piece: a connection of one slot suffices
        const Chunk s = piece(l - k, m), v = piece(l - k - 1, m);
        ops.send(next, k == 0 ? build::in(s.offset, s.count) : build::out(s.offset, s.count), 0);
        ops.recvReduce(prev, build::in(v.offset, v.count), build::out(v.offset, v.count), 0);
      }
    // 2. Ring allreduce of shard l+1 across the nodes, piece by piece (it is in the output already).
    const int shard = l + 1;
    for (int k = 0; k < nodes - 1; ++k) {
      const Chunk s = piece(shard, n - k), v = piece(shard, n - k - 1);
      ops.send(up, build::out(s.offset, s.count), 0);
      ops.recvReduce(down, build::out(v.offset, v.count), build::out(v.offset, v.count), 0);
    }
    for (int k = 0; k < nodes - 1; ++k) {
      const Chunk s = piece(shard, n + 1 - k), v = piece(shard, n - k);
      ops.send(up, build::out(s.offset, s.count), 0);
      ops.recv(down, build::out(v.offset, v.count), 0);
    }
    // 3. Allgather in the node.
    for (int k = 0; k < g - 1; ++k)
      for (int m = 0; m < nodes; ++m) {
        const Chunk s = piece(l + 1 - k, m), v = piece(l - k, m);
        ops.send(next, build::out(s.offset, s.count), 0);
        ops.recv(prev, build::out(v.offset, v.count), 0);
      }
  }
  return plan;
}

}  // namespace cclab::plan
