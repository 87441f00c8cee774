// Plan: an algorithm written once, as data.
//
// A Plan says, for every rank, an ordered list of ops: which element range it sends to whom, receives
// from whom, and whether it reduces or copies. The host executor, the CUDA executor and the simulator
// all consume the same Plan (see docs/design.md, "One plan, three consumers").
//
// Semantics every consumer honours:
//  - Ranges are in elements of the collective's data type, over a rank's Input, Output or Scratch buffer.
//  - Channels (NCCL's word): a plan has `nchannels` independent lanes, each an algorithm over its own
//    part of the data (often in its own rank order). Every op carries its channel; a rank's op list
//    holds channel 0's ops, then channel 1's, and so on (channelOps() gives each one's span). Channels
//    share nothing but the buffers, and their ranges never overlap, so an executor may run them
//    concurrently (interleaved, or on separate thread blocks) or one after the other.
//  - Sends and receives between one ordered pair of ranks on one channel match in order (a FIFO
//    connection); the k-th send from a to b on channel c pairs with the k-th receive at b from a on c,
//    and both have the same count. A ReduceAll counts as one receive from every other rank.
//  - Phase dependencies (Plan::deps; MSCCL's cross-threadblock dependencies, at phase granularity): on
//    every rank, channel `channel` starts its ops of phase `phase` only once channel `afterChannel` has
//    finished all its ops of phases <= `afterPhase` (afterPhase < phase). Channels linked so may touch
//    the same elements, in the order the deps give them (the hierarchical allreduce's node and network
//    lanes hand each block of data to each other). An executor that runs a rank's channels on one
//    thread, op after op, walks them in sequentialOps() order (phase by phase when there are deps).
//  - Ops carry a phase. Phases run in order within a channel. Inside a phase an executor may pipeline: it cuts every op
//    into slices of S elements and runs slice 0 of every op of the phase (in op order), then slice 1,
//    and so on. Generators only put ops in one phase when that is valid, i.e. when an op that reads
//    what an earlier op of the same phase wrote starts at the same element (validate() checks this).
//  - RecvReduce: dst[i] = src[i] (op) received[i]; src may be the same range as dst.
//    Recv: dst[i] = received[i].  Copy: dst[i] = src[i].  Send: peer receives src.
//    ReduceAll: dst[i] = v_0[i] (op) v_1[i] (op) ... (op) v_{p-1}[i], folded left in rank order, where
//    v_q is what rank q sent (one message from every other rank, same count) and v_r = src on this
//    rank r: one pass over every peer's data, and every rank that reduces the same element gets the
//    same bits (the one-shot and two-shot allreduces).
//  - A plan is compact: its size grows with ranks x steps, never with bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cclab::plan {

enum class Collective : std::uint8_t { AllReduce, ReduceScatter, AllGather, Broadcast, Reduce };

// Ring, Tree (NCCL's tree: a chain in each node, a double binary tree between nodes, reduce and
// broadcast on two concurrent lanes), FlatTree (one binary tree over all ranks, up then down),
// DoubleBinaryTree (two complementary flat trees, half the data each),
// HalvingDoubling (Rabenseifner), RecursiveDoubling (whole-vector exchanges, for small messages),
// Chain (pipelined chain; broadcast and reduce only). Auto is resolved by the Communicator before a
// plan is generated.
// Hierarchical (intra-node reduce-scatter, inter-node ring allreduce per shard, intra-node allgather,
// pipelined; needs PlanShape::ranksPerNode), OneShot (every rank reduces every peer's whole input) and
// TwoShot (reduce-scatter by direct reads, then allgather) are allreduce only.
enum class Algorithm : std::uint8_t {
  Ring, Tree, DoubleBinaryTree, HalvingDoubling, Chain, Auto, RecursiveDoubling, Hierarchical, OneShot, TwoShot,
  FlatTree
};

enum class Buf : std::uint8_t { Input, Output, Scratch };

enum class OpKind : std::uint8_t { Send, Recv, RecvReduce, Copy, ReduceAll };

// Most channels a plan may have (a channel index is one byte in an Op; NCCL's MAXCHANNELS is 64).
inline constexpr int kMaxChannels = 64;

struct Range {
  Buf buf = Buf::Input;
  std::int64_t offset = 0;  // elements
  std::int64_t count = 0;   // elements

  [[nodiscard]] std::int64_t end() const { return offset + count; }
  friend bool operator==(const Range&, const Range&) = default;
};

struct Op {
  OpKind kind = OpKind::Copy;
  int peer = -1;        // Send, Recv, RecvReduce: the other rank; Copy, ReduceAll: -1
  int phase = 0;        // see the header comment
  Range src;            // Send: what is sent; RecvReduce, ReduceAll: local operand; Copy: source; Recv: unused
  Range dst;            // Recv, RecvReduce, ReduceAll, Copy: what is written; Send: unused
  std::uint8_t channel = 0;  // see the header comment (last, so {kind, peer, phase, src, dst} still works)

  [[nodiscard]] std::int64_t count() const { return kind == OpKind::Send ? src.count : dst.count; }
  [[nodiscard]] bool writes() const { return kind != OpKind::Send; }
  [[nodiscard]] bool reads() const { return kind != OpKind::Recv; }
  [[nodiscard]] bool receives() const { return kind == OpKind::Recv || kind == OpKind::RecvReduce || kind == OpKind::ReduceAll; }
};

// See the header comment: on every rank, `channel`'s phase `phase` waits for `afterChannel`'s phases
// <= afterPhase. A channel without ops of afterPhase or earlier satisfies it at once.
struct PhaseDep {
  int channel = 0;
  int phase = 0;
  int afterChannel = 0;
  int afterPhase = 0;
  friend bool operator==(const PhaseDep&, const PhaseDep&) = default;
};

struct Plan {
  Collective collective = Collective::AllReduce;
  Algorithm algorithm = Algorithm::Ring;
  int nranks = 1;
  std::int64_t count = 0;  // the NCCL API's count (see bufferCounts)
  int root = 0;            // Broadcast and Reduce
  int nphases = 1;
  int nchannels = 1;
  int ranksPerNode = 0;           // the node size the plan was made for (0: one node)
  std::int64_t scratchCount = 0;  // elements of scratch each rank needs
  std::vector<std::vector<Op>> ranks;  // ranks[r] = ordered ops of rank r, channel by channel
  std::vector<PhaseDep> deps;          // the same on every rank; empty: channels are independent

  [[nodiscard]] std::size_t opCount() const;
};

// Rank r's ops of each channel: nchannels spans into plan.ranks[r] (empty where a channel has none).
std::vector<std::span<const Op>> channelOps(const Plan& plan, int rank);

// Rank r's ops in the order an executor that runs them one after the other on one thread walks them
// (SliceWalker over the result): as listed (channel by channel) when the plan has no deps, else
// phase by phase, each phase channel by channel (a stable sort by phase), which honours every dep
// because a dep always points to an earlier phase. Every rank walks the same order, so the k-th
// message on a pair of ranks is still the one the plan pairs it with. Without deps it is the plan's
// own list (no copy); with deps a sorted copy. The plan must outlive it.
class SequentialOps {
 public:
  SequentialOps() = default;
  SequentialOps(const Plan& plan, int rank);
  [[nodiscard]] std::span<const Op> ops() const { return listed_ ? std::span<const Op>(*listed_) : std::span<const Op>(sorted_); }

 private:
  const std::vector<Op>* listed_ = nullptr;  // the plan's list (a plan without deps)
  std::vector<Op> sorted_;                   // phase by phase (a plan with deps)
};
inline SequentialOps sequentialOps(const Plan& plan, int rank) { return {plan, rank}; }

// How a plan is laid out over the machine: how many channels, how many consecutive ranks share a
// node (0: all ranks on one node), and how many NICs a node has (0: one per rank of a node). Ring and
// tree channels cross between nodes through NICs chosen per channel (nic_layout.h): channel c uses NIC
// c mod K, entering and leaving each node through GPUs of that NIC, so channels spread over the NICs;
// the hierarchical allreduce needs nranks to be a multiple of ranksPerNode.
struct PlanShape {
  int channels = 1;
  int ranksPerNode = 0;
  int blocks = 0;  // hier, tree: blocks their lanes pipeline over (1..kMaxHierarchicalBlocks); 0: the generator's choice
  int nicsPerNode = 0;  // NICs per node, GPU l of a node using NIC floor(l·K/ranksPerNode); 0 (or > ranksPerNode): one per rank
  friend bool operator==(const PlanShape&, const PlanShape&) = default;
};

// Ring order of channel c (position -> rank): node by node, every node alike: channel c enters a node
// at its entry GPU and leaves from its exit GPU, both on NIC c mod K (nic_layout.h; K = nicsPerNode,
// 0: one NIC per rank, where channel c enters at local rank c mod g and leaves from (c - 1) mod g), and
// visits the node's other ranks in between, upwards from the entry. With one node (or g not dividing
// nranks) every channel is 0, 1, ..., p-1.
std::vector<int> ringOrder(int nranks, int ranksPerNode, int channel, int nicsPerNode = 0);

// Buffer sizes in elements, with NCCL's meaning of count:
//   AllReduce: in = out = count.      ReduceScatter: in = nranks*count, out = count.
//   AllGather: in = count, out = nranks*count.   Broadcast, Reduce: in = out = count.
struct BufferCounts {
  std::int64_t input = 0;
  std::int64_t output = 0;
};
BufferCounts bufferCounts(Collective c, int nranks, std::int64_t count);
// Broadcast and Reduce have a root (and nccl-tests prints -1 as the root of the others).
constexpr bool isRooted(Collective c) { return c == Collective::Broadcast || c == Collective::Reduce; }
// The collectives that combine values with a reduction op (the others only move data).
constexpr bool reduces(Collective c) {
  return c == Collective::AllReduce || c == Collective::ReduceScatter || c == Collective::Reduce;
}

// In-place layout, as NCCL defines it: the element offset of the input inside the output buffer
// (AllGather: rank*count) or of the output inside the input (ReduceScatter: rank*count); 0 otherwise.
std::int64_t inPlaceInputOffset(Collective c, int rank, std::int64_t count);   // input inside output
std::int64_t inPlaceOutputOffset(Collective c, int rank, std::int64_t count);  // output inside input

// Generators: one per algorithm, each in its own file. All accept any nranks >= 1 and count >= 0.
Plan allReduceRing(int nranks, std::int64_t count);
// NCCL's tree (allreduce_tree.cc) for channel `channel` of a plan: two lanes (up, down) over `blocks`
// blocks (0: treeBlocks(count)); nodes of ranksPerNode ranks with nicsPerNode NICs (PlanShape).
Plan allReduceTree(int nranks, std::int64_t count, int ranksPerNode = 0, int nicsPerNode = 0, int channel = 0,
                   int blocks = 0);
inline constexpr int kMaxTreeBlocks = 8;
int treeBlocks(std::int64_t count);
// The tree's blocks for a whole call: PlanShape::blocks (at most kMaxTreeBlocks), else treeBlocks of
// its smallest part, chunkOf(count, C, C-1), for every part.
int treeBlocksOf(std::int64_t count, PlanShape shape);
// One binary tree over all ranks (allreduce_flat_tree.cc), the double binary tree's first tree.
Plan allReduceFlatTree(int nranks, std::int64_t count);
// One channel: the double binary tree's second tree (inOrderTree shifted by one rank) over all of count.
Plan allReduceShiftedTree(int nranks, std::int64_t count);
Plan allReduceDoubleBinaryTree(int nranks, std::int64_t count);
Plan allReduceHalvingDoubling(int nranks, std::int64_t count);
Plan allReduceRecursiveDoubling(int nranks, std::int64_t count);
Plan reduceScatterRing(int nranks, std::int64_t count);
Plan allGatherRing(int nranks, std::int64_t count);
Plan broadcastChain(int nranks, std::int64_t count, int root);
Plan broadcastTree(int nranks, std::int64_t count, int root);
Plan reduceChain(int nranks, std::int64_t count, int root);
Plan reduceTree(int nranks, std::int64_t count, int root);
// Two channels (a node lane and a network lane, linked by deps) over `blocks` blocks (0:
// hierarchicalBlocks(count, ...)).
Plan allReduceHierarchical(int nranks, std::int64_t count, int ranksPerNode, int blocks = 0);
// How many blocks the hierarchical allreduce pipelines `count` elements in (allreduce_hierarchical.cc);
// makePlan gives all C channels the number of its smallest part, chunkOf(count, C, C-1), unless
// PlanShape::blocks says how many. hierarchicalBlocksOf is that number for a whole call.
inline constexpr int kMaxHierarchicalBlocks = 16;
int hierarchicalBlocks(std::int64_t count, int ranksPerNode, int nodes);
int hierarchicalBlocksOf(int nranks, std::int64_t count, PlanShape shape);
Plan allReduceOneShot(int nranks, std::int64_t count);
Plan allReduceTwoShot(int nranks, std::int64_t count);

// Dispatch by collective and algorithm; throws cclab::InvalidArgument for a combination that does
// not exist (e.g. ReduceScatter with Tree) or bad nranks/count/root/shape. With shape.channels = C the
// data is cut into C parts (chunkOf) and channel c runs the algorithm on part c (channels.cc), the
// ring in ringOrder(c); the double binary tree is always two channels (one per tree) times C/2; the
// tree two lanes per part (2C channels).
Plan makePlan(Collective c, Algorithm a, int nranks, std::int64_t count, int root = 0, PlanShape shape = {});
bool hasGenerator(Collective c, Algorithm a);
// The algorithm of the plan makePlan(c, a) really writes (its Plan::algorithm): Broadcast and Reduce
// run "dbtree" as the plain tree (one tree already uses every link once) and "ring" as the chain
// (NCCL's name for it). Everything else, and a combination without a generator, is returned as is.
Algorithm generatedAlgorithm(Collective c, Algorithm a);

// The chunk [offset, offset+count) of `total` elements that chunk i of n gets: the first total%n
// chunks are one element longer. Every generator that splits data uses this one function.
struct Chunk {
  std::int64_t offset = 0;
  std::int64_t count = 0;
};
Chunk chunkOf(std::int64_t total, int n, int i);

std::string_view name(Collective c);
std::string_view name(Algorithm a);
std::string_view name(OpKind k);
std::string_view name(Buf b);
// Parse "ring", "tree", "flat-tree", "dbtree", "rhd", "rd", "chain", "hier", "oneshot", "twoshot", "auto"; throws
// cclab::InvalidArgument otherwise.
Algorithm parseAlgorithm(std::string_view s);
Collective parseCollective(std::string_view s);

std::string describe(const Op& op);  // "send->3 in[0,+5)" etc., for errors and dumps
std::string dump(const Plan& plan);  // every rank's ops, one per line

}  // namespace cclab::plan
