// Recursive halving-doubling allreduce (Rabenseifner 2004; Thakur, Rabenseifner & Gropp 2005), for
// any nranks.
//
// With q = the largest power of two <= p:
//  1. fold (fold.h): the p - q extra ranks hand their vector to a partner, which reduces it; q ranks
//     remain, with virtual ids v;
//  2. reduce-scatter by recursive halving: for masks q/2, q/4, ..., 1, rank v exchanges half of its
//     current block range with v^mask and keeps the lower or upper half, reduced; it ends with
//     block v of q blocks (chunkOf);
//  3. allgather by recursive doubling: for masks 1, 2, ..., q/2, it exchanges its block range with
//     v^mask, doubling the range;
//  4. unfold: each even rank below 2e sends the result to the odd rank above it.
// Every step is its own phase (block ranges shift between steps).
//
// Cost (q = p): 2·log2(p)·α + 2(p-1)/p·nβ + (p-1)/p·nγ; folding adds 2α + 2nβ + nγ when p is not
// a power of two.
#include "collectives/plan/builder.h"
#include "collectives/plan/fold.h"

namespace cclab::plan {

Plan allReduceHalvingDoubling(int nranks, std::int64_t count) {
  const int p = nranks;
  const Fold fold(p);
  const int q = fold.powerOfTwo();
  const int logq = fold.log2();
  Plan plan = build::emptyPlan(Collective::AllReduce, Algorithm::HalvingDoubling, nranks, count, 0, 2 * logq + 2);
  const int unfoldPhase = 2 * logq + 1;
  // Elements of blocks [b, b + n) of q blocks.
  auto blocks = [&](int b, int n) {
    const Chunk first = chunkOf(count, q, b), last = chunkOf(count, q, b + n - 1);
    return Chunk{first.offset, last.offset + last.count - first.offset};
  };
  for (int r = 0; r < p; ++r) {
    build::Ops ops(plan, r);
    if (p == 1) {
      ops.copy(build::in(0, count), build::out(0, count), 0);
      continue;
    }
    const bool extra = fold.isExtra(r);  // sits out steps 2 and 3
    if (extra) {
      ops.send(r - 1, build::in(0, count), 0);
      ops.recv(r - 1, build::out(0, count), unfoldPhase);
      continue;
    }
    const bool folds = fold.folds(r);
    if (folds) ops.recvReduce(r + 1, build::in(0, count), build::out(0, count), 0);
    const int v = fold.virtualRank(r);
    bool inOutput = folds;  // do my current values live in the output (else still in the input)?
    int base = 0, width = q;  // my current block range
    int phase = 1;
    for (int mask = q / 2; mask >= 1; mask /= 2, ++phase) {  // recursive halving
      const int peer = fold.rankOf(v ^ mask);
      const int half = width / 2;
      const bool upper = (v & mask) != 0;
      const Chunk give = blocks(upper ? base : base + half, half);
      const Chunk keep = blocks(upper ? base + half : base, half);
      const Range from = inOutput ? build::out(give.offset, give.count) : build::in(give.offset, give.count);
      ops.send(peer, from, phase);
      ops.recvReduce(peer, inOutput ? build::out(keep.offset, keep.count) : build::in(keep.offset, keep.count),
                     build::out(keep.offset, keep.count), phase);
      inOutput = true;
      base = upper ? base + half : base;
      width = half;
    }
    for (int mask = 1; mask < q; mask *= 2, ++phase) {  // recursive doubling
      const int peer = fold.rankOf(v ^ mask);
      const int peerBase = base ^ mask;
      const Chunk mine = blocks(base, width), theirs = blocks(peerBase, width);
      ops.send(peer, build::out(mine.offset, mine.count), phase);
      ops.recv(peer, build::out(theirs.offset, theirs.count), phase);
      base = base < peerBase ? base : peerBase;
      width *= 2;
    }
    if (folds) ops.send(r + 1, build::out(0, count), unfoldPhase);
  }
  return plan;
}

}  // namespace cclab::plan
