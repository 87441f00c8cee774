#include "collectives/plan/plan.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "collectives/core/errors.h"
#include "collectives/plan/algorithm_file.h"
#include "collectives/plan/channels.h"

namespace cclab::plan {

std::size_t Plan::opCount() const {
  std::size_t n = 0;
  for (const auto& r : ranks) n += r.size();
  return n;
}

BufferCounts bufferCounts(Collective c, int nranks, std::int64_t count) {
  switch (c) {
    case Collective::ReduceScatter: return {nranks * count, count};
    case Collective::AllGather: return {count, nranks * count};
    default: return {count, count};
  }
}

std::int64_t inPlaceInputOffset(Collective c, int rank, std::int64_t count) {
  return c == Collective::AllGather ? rank * count : 0;
}

std::int64_t inPlaceOutputOffset(Collective c, int rank, std::int64_t count) {
  return c == Collective::ReduceScatter ? rank * count : 0;
}

Chunk chunkOf(std::int64_t total, int n, int i) {
  const std::int64_t base = total / n, extra = total % n;
  return {i * base + std::min<std::int64_t>(i, extra), base + (i < extra ? 1 : 0)};
}

bool hasGenerator(Collective c, Algorithm a) {
  if (isFileAlgorithm(a)) return algorithmFileOf(a).unit.collective == c;
  switch (c) {
    case Collective::AllReduce:
      return a == Algorithm::Ring || a == Algorithm::Tree || a == Algorithm::FlatTree || a == Algorithm::DoubleBinaryTree ||
             a == Algorithm::HalvingDoubling || a == Algorithm::RecursiveDoubling || a == Algorithm::Hierarchical ||
             a == Algorithm::OneShot || a == Algorithm::TwoShot;
    case Collective::ReduceScatter:
    case Collective::AllGather: return a == Algorithm::Ring;
    case Collective::Broadcast:
    case Collective::Reduce:
      return a == Algorithm::Ring || a == Algorithm::Chain || a == Algorithm::Tree || a == Algorithm::DoubleBinaryTree;
  }
  return false;
}

Algorithm generatedAlgorithm(Collective c, Algorithm a) {
  if (isFileAlgorithm(a) || !isRooted(c) || !hasGenerator(c, a)) return a;
  return (a == Algorithm::Ring || a == Algorithm::Chain) ? Algorithm::Chain : Algorithm::Tree;
}

namespace {

// The one-channel plan of (c, a) on `count` elements (the double binary tree is handled by makePlan).
Plan oneChannel(Collective c, Algorithm a, int nranks, std::int64_t count, int root, int ranksPerNode) {
  switch (c) {
    case Collective::AllReduce:
      switch (a) {
        case Algorithm::Ring: return allReduceRing(nranks, count);
        case Algorithm::FlatTree: return allReduceFlatTree(nranks, count);
        case Algorithm::RecursiveDoubling: return allReduceRecursiveDoubling(nranks, count);
        case Algorithm::Hierarchical: return allReduceHierarchical(nranks, count, ranksPerNode);
        case Algorithm::OneShot: return allReduceOneShot(nranks, count);
        case Algorithm::TwoShot: return allReduceTwoShot(nranks, count);
        default: return allReduceHalvingDoubling(nranks, count);
      }
    case Collective::ReduceScatter: return reduceScatterRing(nranks, count);
    case Collective::AllGather: return allGatherRing(nranks, count);
    // For broadcast and reduce, "ring" is NCCL's name for the pipelined chain.
    case Collective::Broadcast:
      return (a == Algorithm::Ring || a == Algorithm::Chain) ? broadcastChain(nranks, count, root)
                                                             : broadcastTree(nranks, count, root);
    case Collective::Reduce:
      return (a == Algorithm::Ring || a == Algorithm::Chain) ? reduceChain(nranks, count, root)
                                                             : reduceTree(nranks, count, root);
  }
  throw InvalidArgument("makePlan: unknown collective");
}

}  // namespace

void checkPlanArguments(Collective c, Algorithm a, int nranks, std::int64_t count, int root, PlanShape shape) {
  if (nranks < 1) throw InvalidArgument("makePlan: nranks must be >= 1, got " + std::to_string(nranks));
  if (count < 0) throw InvalidArgument("makePlan: count must be >= 0, got " + std::to_string(count));
  if (root < 0 || root >= nranks)
    throw InvalidArgument("makePlan: root " + std::to_string(root) + " is not a rank of " + std::to_string(nranks));
  if (!hasGenerator(c, a))
    throw InvalidArgument("makePlan: no " + std::string(name(a)) + " algorithm for " + std::string(name(c)));
  if (shape.ranksPerNode < 0)
    throw InvalidArgument("makePlan: ranksPerNode must be >= 0, got " + std::to_string(shape.ranksPerNode));
  if (shape.blocks < 0 || shape.blocks > kMaxHierarchicalBlocks)
    throw InvalidArgument("makePlan: blocks must be 0 (automatic) or 1.." + std::to_string(kMaxHierarchicalBlocks) + ", got " +
                          std::to_string(shape.blocks));
  const int g = shape.ranksPerNode;
  if (a == Algorithm::Hierarchical && g > 0 && nranks % g != 0)
    throw InvalidArgument("makePlan: hier needs nranks (" + std::to_string(nranks) + ") to be a multiple of ranksPerNode (" +
                          std::to_string(g) + ")");
}

namespace {

// A file algorithm (algorithm_file.h): its unit plan at every part of the data, one part per channel.
Plan makeFilePlan(Collective c, Algorithm a, int nranks, std::int64_t count, int root, PlanShape shape) {
  const AlgorithmFile& file = algorithmFileOf(a);
  const std::string who(name(a));
  if (nranks != file.unit.nranks)
    throw InvalidArgument(who + " is written for " + std::to_string(file.unit.nranks) + " ranks, not " + std::to_string(nranks));
  if (isRooted(c) && root != file.unit.root)
    throw InvalidArgument(who + " is written for root " + std::to_string(file.unit.root) + ", not " + std::to_string(root));
  Plan plan = splitIntoChannels(c, a, nranks, count, root, shape.channels,
                                [&](int, std::int64_t part, int) { return instantiate(file, a, part); });
  plan.ranksPerNode = file.unit.ranksPerNode > 0 ? file.unit.ranksPerNode : shape.ranksPerNode;
  return plan;
}

}  // namespace

Plan makePlan(Collective c, Algorithm a, int nranks, std::int64_t count, int root, PlanShape shape) {
  checkPlanArguments(c, a, nranks, count, root, shape);
  if (isFileAlgorithm(a)) return makeFilePlan(c, a, nranks, count, root, shape);
  const int g = shape.ranksPerNode;
  // The double binary tree's two trees are two channels: channel c runs tree c mod 2.
  const bool dbtree = c == Collective::AllReduce && a == Algorithm::DoubleBinaryTree;
  const int channels = dbtree ? std::max(2, shape.channels + shape.channels % 2) : shape.channels;
  ChannelGenerator generate = [&](int ch, std::int64_t part, int vroot) {
    if (dbtree) return ch % 2 == 0 ? allReduceFlatTree(nranks, part) : allReduceShiftedTree(nranks, part);
    if (c == Collective::AllReduce && a == Algorithm::Tree)  // one block count for every part
      return allReduceTree(nranks, part, g, shape.nicsPerNode, ch, treeBlocksOf(count, shape));
    if (c == Collective::AllReduce && a == Algorithm::Hierarchical && g > 0)  // one block count for every part
      return allReduceHierarchical(nranks, part, g, hierarchicalBlocksOf(nranks, count, shape));
    return oneChannel(c, a, nranks, part, vroot, g);
  };
  ChannelOrder order;
  if (a == Algorithm::Ring && !isRooted(c)) order = [&](int ch) { return ringOrder(nranks, g, ch, shape.nicsPerNode); };
  Plan plan = splitIntoChannels(c, a, nranks, count, root, channels, generate, order);
  if (dbtree) plan.algorithm = Algorithm::DoubleBinaryTree;
  plan.ranksPerNode = g;
  return plan;
}

std::string_view name(Collective c) {
  switch (c) {
    case Collective::AllReduce: return "allreduce";
    case Collective::ReduceScatter: return "reducescatter";
    case Collective::AllGather: return "allgather";
    case Collective::Broadcast: return "broadcast";
    case Collective::Reduce: return "reduce";
  }
  return "?";
}

std::string_view name(Algorithm a) {
  switch (a) {
    case Algorithm::Ring: return "ring";
    case Algorithm::Tree: return "tree";
    case Algorithm::DoubleBinaryTree: return "dbtree";
    case Algorithm::HalvingDoubling: return "rhd";
    case Algorithm::Chain: return "chain";
    case Algorithm::Auto: return "auto";
    case Algorithm::RecursiveDoubling: return "rd";
    case Algorithm::Hierarchical: return "hier";
    case Algorithm::OneShot: return "oneshot";
    case Algorithm::TwoShot: return "twoshot";
    case Algorithm::FlatTree: return "flat-tree";
  }
  if (isFileAlgorithm(a)) return fileAlgorithmName(a);
  return "?";
}

std::string_view name(OpKind k) {
  switch (k) {
    case OpKind::Send: return "send";
    case OpKind::Recv: return "recv";
    case OpKind::RecvReduce: return "recvReduce";
    case OpKind::Copy: return "copy";
    case OpKind::ReduceAll: return "reduceAll";
  }
  return "?";
}

std::string_view name(Buf b) {
  switch (b) {
    case Buf::Input: return "in";
    case Buf::Output: return "out";
    case Buf::Scratch: return "scratch";
  }
  return "?";
}

Algorithm parseAlgorithm(std::string_view s) {
  if (s.starts_with("file:")) return loadAlgorithmFile(std::string(s.substr(5)));  // algorithm_file.h
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::FlatTree, Algorithm::DoubleBinaryTree, Algorithm::HalvingDoubling,
                      Algorithm::RecursiveDoubling, Algorithm::Chain, Algorithm::Hierarchical, Algorithm::OneShot,
                      Algorithm::TwoShot, Algorithm::Auto})
    if (s == name(a)) return a;
  throw InvalidArgument("unknown algorithm '" + std::string(s) +
                        "' (ring, tree, flat-tree, dbtree, rhd, rd, chain, hier, oneshot, twoshot, auto, file:PATH)");
}

Collective parseCollective(std::string_view s) {
  for (Collective c : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather, Collective::Broadcast,
                       Collective::Reduce})
    if (s == name(c)) return c;
  throw InvalidArgument("unknown collective '" + std::string(s) + "'");
}

namespace {
std::string show(const Range& r) {
  std::ostringstream m;
  m << name(r.buf) << "[" << r.offset << ",+" << r.count << ")";
  return m.str();
}
}  // namespace

std::string describe(const Op& op) {
  std::ostringstream m;
  m << name(op.kind);
  switch (op.kind) {
    case OpKind::Send: m << "->" << op.peer << " " << show(op.src); break;
    case OpKind::Recv: m << "<-" << op.peer << " " << show(op.dst); break;
    case OpKind::RecvReduce: m << "<-" << op.peer << " " << show(op.src) << " into " << show(op.dst); break;
    case OpKind::Copy: m << " " << show(op.src) << " to " << show(op.dst); break;
    case OpKind::ReduceAll: m << "<-all " << show(op.src) << " into " << show(op.dst); break;
  }
  m << " phase " << op.phase;
  if (op.channel != 0) m << " channel " << int{op.channel};
  return m.str();
}

std::string dump(const Plan& plan) {
  std::ostringstream m;
  m << name(plan.collective) << " " << name(plan.algorithm) << " nranks " << plan.nranks << " count " << plan.count
    << " root " << plan.root << " phases " << plan.nphases << " channels " << plan.nchannels
    << " ranksPerNode " << plan.ranksPerNode << " scratch " << plan.scratchCount << "\n";
  for (int r = 0; r < plan.nranks; ++r)
    for (const Op& op : plan.ranks[r]) m << "  rank " << r << ": " << describe(op) << "\n";
  return m.str();
}

}  // namespace cclab::plan
