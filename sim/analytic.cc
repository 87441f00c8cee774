// Dispatch of the closed forms by collective and algorithm, and nccl-tests' size rule.
#include "sim/analytic.h"

#include "collectives/core/errors.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "sim/replay.h"

namespace cclab::sim {
namespace {

using plan::Algorithm;
using plan::Collective;

std::int64_t roundsOf(std::int64_t count, std::int64_t slice) {
  if (count <= 0) return 1;
  if (slice <= 0) return 1;
  return (count + slice - 1) / slice;
}

// makePlan: for broadcast and reduce, "ring" is the pipelined chain and every tree is the heap tree.
bool isChain(Algorithm a) { return a == Algorithm::Ring || a == Algorithm::Chain; }

}  // namespace

bool isTwoLevel(int p, int g) { return g > 1 && g < p && p % g == 0; }

HierarchicalRounds hierarchicalRounds(std::int64_t count, int g, int nodes, std::int64_t slice, int blocks) {
  g = std::max(g, 1);
  nodes = std::max(nodes, 1);
  if (g == 1 || nodes == 1) blocks = 1;
  if (blocks < 1) blocks = plan::hierarchicalBlocks(count, g, nodes);
  const std::int64_t shard = count / blocks / g, piece = shard / nodes;  // a block: g shards of N pieces
  return {roundsOf(shard, slice), roundsOf(piece, slice), blocks};
}

std::int64_t maxOpElems(Collective c, Algorithm a, int p, std::int64_t count, int g) {
  switch (c) {
    case Collective::AllReduce:
      if (a == Algorithm::Hierarchical) {
        if (!isTwoLevel(p, g)) return maxOpElems(c, Algorithm::Ring, p, count);
        // a shard of the first block (the node rings move whole shards)
        return plan::chunkOf(plan::chunkOf(count, plan::hierarchicalBlocks(count, g, p / g), 0).count, g, 0).count;
      }
      if (a == Algorithm::DoubleBinaryTree) return plan::chunkOf(count, 2, 0).count;  // p = 1: two copies
      if (a == Algorithm::Tree) return plan::chunkOf(count, plan::treeBlocks(count), 0).count;  // a block
      if (p == 1) return count;
      if (a == Algorithm::Ring || a == Algorithm::TwoShot) return plan::chunkOf(count, p, 0).count;
      if (a == Algorithm::HalvingDoubling && std::has_single_bit(static_cast<unsigned>(p)))
        return plan::chunkOf(count, 2, 0).count;
      return count;
    default: return count;
  }
}

std::int64_t autoSliceElems(Collective c, Algorithm a, int p, std::int64_t count, std::int64_t elemSize, int g) {
  const std::int64_t maxOp = maxOpElems(c, a, p, count, g);
  const std::int64_t minElems = std::max<std::int64_t>(1, kMinAutoSliceBytes / std::max<std::int64_t>(1, elemSize));
  const std::int64_t s = std::max((maxOp + kAutoSlicesPerOp - 1) / kAutoSlicesPerOp, minElems);
  return s >= maxOp ? 0 : s;
}

std::int64_t ncclTreeChunkElems(std::int64_t count, std::int64_t elemSize, int channels, int p, int g) {
  const int perNode = g > 1 && g < p && p % g == 0 ? g : p;
  const int nodes = p / perNode;
  const std::int64_t depth = perNode - 1 + (std::bit_width(static_cast<unsigned>(nodes)) - 1);
  const std::int64_t perChannel = count * elemSize / std::max(1, channels);
  std::int64_t chunk = kMinAutoSliceBytes;
  while (perChannel / chunk < depth * 8 && chunk > 131072) chunk /= 2;
  while (perChannel / chunk < depth * 4 && chunk > 65536) chunk /= 2;
  while (perChannel / chunk < depth && chunk > 32768) chunk /= 2;
  return std::max<std::int64_t>(1, chunk / std::max<std::int64_t>(1, elemSize));
}

namespace {

Micros closedForm(const Schedule& s, const CostParams& k) {
  const int p = s.nranks;
  if (p < 1) throw InvalidArgument("predict: nranks must be >= 1");
  if (!plan::hasGenerator(s.collective, s.algorithm))
    throw InvalidArgument("predict: no " + std::string(plan::name(s.algorithm)) + " algorithm for " +
                                std::string(plan::name(s.collective)));
  const std::int64_t e = s.elemSize, S = s.sliceElems;
  const Bytes n = s.count * e;
  switch (s.collective) {
    case Collective::AllReduce:
      switch (s.algorithm) {
        case Algorithm::Ring: {
          const std::int64_t chunk = s.count / p;
          return ringAllReduce(p, p == 1 ? n : chunk * e, roundsOf(chunk, S), k);
        }
        case Algorithm::Tree: {
          const int blocks = plan::treeBlocks(s.count);
          return ncclTreeAllReduce(p, s.ranksPerNode, n, blocks, roundsOf(plan::chunkOf(s.count, blocks, 0).count, S), k);
        }
        case Algorithm::FlatTree: return treeAllReduce(p, n, roundsOf(s.count, S), k);
        case Algorithm::DoubleBinaryTree: return doubleBinaryTreeAllReduce(p, n, roundsOf(s.count / 2, S), k);
        case Algorithm::RecursiveDoubling: return recursiveDoublingAllReduce(p, s.count, e, S, k);
        case Algorithm::Hierarchical: {
          const int g = s.ranksPerNode;
          if (!isTwoLevel(p, g)) {
            const std::int64_t chunk = s.count / p;
            return ringAllReduce(p, p == 1 ? n : chunk * e, roundsOf(chunk, S), k);
          }
          return hierarchicalAllReduce(p / g, g, n, hierarchicalRounds(s.count, g, p / g, S), Algorithm::Ring, {k, k});
        }
        case Algorithm::OneShot: return oneShotAllReduce(p, n, roundsOf(s.count, S), k);
        case Algorithm::TwoShot: {
          const std::int64_t chunk = s.count / p;
          return twoShotAllReduce(p, p == 1 ? n : chunk * e, roundsOf(chunk, S), k);
        }
        default: return halvingDoublingAllReduce(p, s.count, e, S, k);
      }
    case Collective::ReduceScatter: return ringReduceScatter(p, n, roundsOf(s.count, S), k);
    case Collective::AllGather: return ringAllGather(p, n, roundsOf(s.count, S), k);
    case Collective::Broadcast:
      return isChain(s.algorithm) ? chainBroadcast(p, n, roundsOf(s.count, S), k)
                                  : treeBroadcast(p, n, roundsOf(s.count, S), k);
    case Collective::Reduce:
      return isChain(s.algorithm) ? chainReduce(p, n, roundsOf(s.count, S), k)
                                  : treeReduce(p, n, roundsOf(s.count, S), k);
  }
  throw InvalidArgument("predict: unknown collective");
}

}  // namespace

Micros predict(const Schedule& s, const CostParams& k) { return k.startup + closedForm(s, k); }

Bytes reportedBytes(Collective c, int p, std::int64_t count, std::int64_t e) {
  switch (c) {
    case Collective::ReduceScatter:
    case Collective::AllGather: return count * e * p;
    default: return count * e;
  }
}

}  // namespace cclab::sim
