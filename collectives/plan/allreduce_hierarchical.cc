// Hierarchical allreduce (the 2D ring of Jia et al. 2018 and NCCL's multi-node ring idea): with g ranks
// per node and N = p/g nodes, rank r = n·g + l (node n, local rank l) runs, on every block of the data:
//   - reduce-scatter inside its node (a ring over the node's g ranks, g-1 steps): the block is cut into
//     g shards (chunkOf) and every step moves one whole shard, so afterwards local rank l holds shard
//     s = (l+1) mod g of the block summed over its node;
//   - allreduce of shard s with the ranks of the same local index on the other nodes (a ring over the
//     N nodes, one per local index, so each shard crosses the network through its own rank's NIC):
//     the shard is cut into N pieces, 2(N-1) steps of one piece;
//   - allgather of the shards inside its node (g-1 steps of one whole shard).
// The node rings and the network ring run on two lanes (channels 0 and 1), pipelined over B blocks
// (hierarchical_schedule.h): while the network lane allreduces block t-1, the node lane reduce-
// scatters block t and allgathers block t-2; phase deps hand each block from lane to lane. So a rank's
// NVLink and NIC work overlap instead of adding up, as in NCCL, where a channel's network transfers
// are driven by its proxy while its GPU blocks keep working. With C channels (makePlan) each of the C
// parts of the data has its own two lanes (2C channels).
//
// With one node (N = 1) or one rank per node (g = 1, or ranksPerNode 0) it is the flat ring.
// Cost: sim/analytic_hierarchical.cc (per stage the slower lane, plus the first block's node
// reduce-scatter and the last one's allgather).
#include <algorithm>

#include "collectives/plan/builder.h"
#include "collectives/plan/hierarchical_schedule.h"

namespace cclab::plan {

namespace {
// Fewest elements in one network piece worth a block of its own (smaller blocks pay more in per-step
// latency than they gain in overlap), and most blocks; see docs/sim.md, "hier".
constexpr std::int64_t kMinPieceElems = 16384;
constexpr int kMaxBlocks = kMaxHierarchicalBlocks;
}  // namespace

int hierarchicalBlocks(std::int64_t count, int ranksPerNode, int nodes) {
  const std::int64_t perBlock = std::int64_t{std::max(ranksPerNode, 1)} * std::max(nodes, 1) * kMinPieceElems;
  return static_cast<int>(std::clamp<std::int64_t>(count / perBlock, 1, kMaxBlocks));
}

int hierarchicalBlocksOf(int nranks, std::int64_t count, PlanShape shape) {
  if (shape.blocks > 0) return shape.blocks;
  const int g = std::max(shape.ranksPerNode, 1), channels = std::max(shape.channels, 1);
  return hierarchicalBlocks(chunkOf(count, channels, channels - 1).count, g, std::max(nranks / g, 1));
}

Plan allReduceHierarchical(int nranks, std::int64_t count, int ranksPerNode, int blocks) {
  const int g = ranksPerNode;
  if (g <= 1 || g >= nranks || nranks % g != 0) {
    Plan flat = allReduceRing(nranks, count);
    flat.algorithm = Algorithm::Hierarchical;
    return flat;
  }
  const int nodes = nranks / g;
  if (blocks < 1) blocks = hierarchicalBlocks(count, g, nodes);
  Plan plan = build::emptyPlan(Collective::AllReduce, Algorithm::Hierarchical, nranks, count, 0, blocks + 2);
  plan.nchannels = 2;
  plan.deps = hier::deps(blocks);
  // Shard j of block b, and piece m of that shard.
  auto shard = [&](int b, int j) {
    const Chunk block = chunkOf(count, blocks, b);
    const Chunk s = chunkOf(block.count, g, build::mod(j, g));
    return Chunk{block.offset + s.offset, s.count};
  };
  auto piece = [&](int b, int j, int m) {
    const Chunk s = shard(b, j);
    const Chunk part = chunkOf(s.count, nodes, build::mod(m, nodes));
    return Chunk{s.offset + part.offset, part.count};
  };
  for (int r = 0; r < nranks; ++r) {  // the node lane: rings n·g + (l ± 1), whole shards
    build::Ops ops(plan, r, hier::kNodeLane);
    const int n = r / g, l = r % g;
    const int next = n * g + (l + 1) % g, prev = n * g + (l + g - 1) % g;
    for (const hier::Group& grp : hier::nodeGroups(blocks)) {
      const int b = grp.block, t = grp.phase;
      for (int k = 0; k < g - 1; ++k) {
        if (grp.part == hier::Part::NodeScatter) {  // send shard l-k, receive shard l-k-1
          const Chunk s = shard(b, l - k), v = shard(b, l - k - 1);
          ops.send(next, k == 0 ? build::in(s.offset, s.count) : build::out(s.offset, s.count), t);
          ops.recvReduce(prev, build::in(v.offset, v.count), build::out(v.offset, v.count), t);
        } else {  // allgather: send shard l+1-k, receive shard l-k
          const Chunk s = shard(b, l + 1 - k), v = shard(b, l - k);
          ops.send(next, build::out(s.offset, s.count), t);
          ops.recv(prev, build::out(v.offset, v.count), t);
        }
      }
    }
  }
  for (int r = 0; r < nranks; ++r) {  // the network lane: ring allreduce of shard l+1 on ranks m·g + l
    build::Ops ops(plan, r, hier::kNetworkLane);
    const int n = r / g, l = r % g, sh = l + 1;
    const int up = ((n + 1) % nodes) * g + l, down = ((n + nodes - 1) % nodes) * g + l;
    for (const hier::Group& grp : hier::networkGroups(blocks)) {
      const int b = grp.block, t = grp.phase;
      for (int k = 0; k < nodes - 1; ++k) {
        const Chunk s = piece(b, sh, n - k), v = piece(b, sh, n - k - 1);
        ops.send(up, build::out(s.offset, s.count), t);
        ops.recvReduce(down, build::out(v.offset, v.count), build::out(v.offset, v.count), t);
      }
      for (int k = 0; k < nodes - 1; ++k) {
        const Chunk s = piece(b, sh, n + 1 - k), v = piece(b, sh, n - k);
        ops.send(up, build::out(s.offset, s.count), t);
        ops.recv(down, build::out(v.offset, v.count), t);
      }
    }
  }
  return plan;
}

}  // namespace cclab::plan
