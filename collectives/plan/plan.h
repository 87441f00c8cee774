// Plan: an algorithm written once, as data.
//
// A Plan says, for every rank, an ordered list of ops: which element range it sends to whom, receives
// from whom, and whether it reduces or copies. The host executor, the CUDA executor and the simulator
// all consume the same Plan (see docs/design.md, "One plan, three consumers").
//
// Semantics every consumer honours:
//  - Ranges are in elements of the collective's data type, over a rank's Input, Output or Scratch buffer.
//  - Sends and receives between one ordered pair of ranks match in order (a FIFO channel); the k-th
//    send from a to b pairs with the k-th receive at b from a, and both have the same count.
//  - Ops carry a phase. Phases run in order. Inside a phase an executor may pipeline: it cuts every op
//    into slices of S elements and runs slice 0 of every op of the phase (in op order), then slice 1,
//    and so on. Generators only put ops in one phase when that is valid, i.e. when an op that reads
//    what an earlier op of the same phase wrote starts at the same element (validate() checks this).
//  - RecvReduce: dst[i] = src[i] (op) received[i]; src may be the same range as dst.
//    Recv: dst[i] = received[i].  Copy: dst[i] = src[i].  Send: peer receives src.
//  - A plan is compact: its size grows with ranks x steps, never with bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cclab::plan {

enum class Collective : std::uint8_t { AllReduce, ReduceScatter, AllGather, Broadcast, Reduce };

// Ring, Tree (binary, pipelined), DoubleBinaryTree (two complementary trees, half the data each),
// HalvingDoubling (Rabenseifner), RecursiveDoubling (whole-vector exchanges, for small messages),
// Chain (pipelined chain; broadcast and reduce only). Auto is resolved by the Communicator before a
// plan is generated.
enum class Algorithm : std::uint8_t { Ring, Tree, DoubleBinaryTree, HalvingDoubling, Chain, Auto, RecursiveDoubling };

enum class Buf : std::uint8_t { Input, Output, Scratch };

enum class OpKind : std::uint8_t { Send, Recv, RecvReduce, Copy };

struct Range {
  Buf buf = Buf::Input;
  std::int64_t offset = 0;  // elements
  std::int64_t count = 0;   // elements

  [[nodiscard]] std::int64_t end() const { return offset + count; }
  friend bool operator==(const Range&, const Range&) = default;
};

struct Op {
  OpKind kind = OpKind::Copy;
  int peer = -1;        // Send, Recv, RecvReduce: the other rank; Copy: -1
  int phase = 0;        // see the header comment
  Range src;            // Send: what is sent; RecvReduce: local operand; Copy: source; Recv: unused
  Range dst;            // Recv, RecvReduce, Copy: what is written; Send: unused

  [[nodiscard]] std::int64_t count() const { return kind == OpKind::Send ? src.count : dst.count; }
  [[nodiscard]] bool writes() const { return kind != OpKind::Send; }
  [[nodiscard]] bool reads() const { return kind != OpKind::Recv; }
};

struct Plan {
  Collective collective = Collective::AllReduce;
  Algorithm algorithm = Algorithm::Ring;
  int nranks = 1;
  std::int64_t count = 0;  // the NCCL API's count (see bufferCounts)
  int root = 0;            // Broadcast and Reduce
  int nphases = 1;
  std::int64_t scratchCount = 0;  // elements of scratch each rank needs
  std::vector<std::vector<Op>> ranks;  // ranks[r] = ordered ops of rank r

  [[nodiscard]] std::size_t opCount() const;
};

// Buffer sizes in elements, with NCCL's meaning of count:
//   AllReduce: in = out = count.      ReduceScatter: in = nranks*count, out = count.
//   AllGather: in = count, out = nranks*count.   Broadcast, Reduce: in = out = count.
struct BufferCounts {
  std::int64_t input = 0;
  std::int64_t output = 0;
};
BufferCounts bufferCounts(Collective c, int nranks, std::int64_t count);

// In-place layout, as NCCL defines it: the element offset of the input inside the output buffer
// (AllGather: rank*count) or of the output inside the input (ReduceScatter: rank*count); 0 otherwise.
std::int64_t inPlaceInputOffset(Collective c, int rank, std::int64_t count);   // input inside output
std::int64_t inPlaceOutputOffset(Collective c, int rank, std::int64_t count);  // output inside input

// Generators: one per algorithm, each in its own file. All accept any nranks >= 1 and count >= 0.
Plan allReduceRing(int nranks, std::int64_t count);
Plan allReduceTree(int nranks, std::int64_t count);
Plan allReduceDoubleBinaryTree(int nranks, std::int64_t count);
Plan allReduceHalvingDoubling(int nranks, std::int64_t count);
Plan allReduceRecursiveDoubling(int nranks, std::int64_t count);
Plan reduceScatterRing(int nranks, std::int64_t count);
Plan allGatherRing(int nranks, std::int64_t count);
Plan broadcastChain(int nranks, std::int64_t count, int root);
Plan broadcastTree(int nranks, std::int64_t count, int root);
Plan reduceChain(int nranks, std::int64_t count, int root);
Plan reduceTree(int nranks, std::int64_t count, int root);

// Dispatch by collective and algorithm; throws std::invalid_argument for a combination that does
// not exist (e.g. ReduceScatter with Tree) or bad nranks/count/root.
Plan makePlan(Collective c, Algorithm a, int nranks, std::int64_t count, int root = 0);
bool hasGenerator(Collective c, Algorithm a);

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
// Parse "ring", "tree", "dbtree", "rhd", "rd", "chain", "auto"; throws std::invalid_argument otherwise.
Algorithm parseAlgorithm(std::string_view s);
Collective parseCollective(std::string_view s);

std::string describe(const Op& op);  // "send->3 in[0,+5)" etc., for errors and dumps
std::string dump(const Plan& plan);  // every rank's ops, one per line

}  // namespace cclab::plan
