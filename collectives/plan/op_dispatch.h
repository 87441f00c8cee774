// The op rules, written once: what one slice of each op kind does (plan.h: Send, Recv, RecvReduce,
// Copy, ReduceAll), the write-after-send check before any write, and ReduceAll's rank-order fold.
// Every consumer that runs or compiles a plan's ops dispatches through dispatchSlice(): PlanRunner
// (plan_runner.h) for every executor and for the interpreter (interpret.h, typed and symbolic
// elements), and the CUDA lowering (cuda/lowering.cc), which compiles the same moves into device steps.
//
// A slice consumer S says where the slice's operands lie and what moving them means:
//   Ptr, In                              an operand written / read (Ptr converts to In): pointers, or a
//                                        range on a rank (the lowering)
//   Ptr at(const Range& r, std::int64_t lo)   elements [lo, lo + slice) of r on this rank
//   bool writable(Ptr dst)               may dst be written (no unread send of the rank from there)?
//   bool send(const Op&, In src)         false while the send cannot go
//   bool receive(const Op&, int peer, Ptr into, int index, In& value)
//       the slice from peer (index: its place among the op's receives, receiveIndex; into: dst of a
//       Recv, where it may land), false while it is not there
//   void release(const Op&, int peer)    the slice received from peer is read
//   void copy(Ptr dst, In src)           dst = src (the two may overlap: memmove)
//   void reduce(Ptr dst, In a, In b)     dst = a (op) b, element by element (dst may be a)
//   bool overlaps(Ptr dst, In src)       do the two share an element?
//   bool same(Ptr dst, In src)           are they the same elements?
//   Ptr accumulator(Ptr dst, In own)     where ReduceAll folds when dst overlaps its own operand
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collectives/plan/plan.h"

namespace cclab::plan {

// The index a consumer's receive gets for the slice from `peer` of op on rank `rank` (its place among
// the op's receives: ReduceAll's in rank order without the rank itself, else 0).
inline int receiveIndex(const Op& op, int peer, int rank) {
  return op.kind != OpKind::ReduceAll ? 0 : peer < rank ? peer : peer - 1;
}

// ReduceAll's result: dst = v_0 (op) ... (op) v_{p-1}, left to right; values[rank] is this rank's own
// operand, so every rank computes the same bits. Folds into dst unless dst overlaps the own operand
// and that is still to be read after the first step (then into the consumer's accumulator, copied to
// dst at the end).
template <class S>
void foldRankOrder(S& s, std::span<const typename S::In> values, int rank, typename S::Ptr dst) {
  const typename S::In own = values[static_cast<std::size_t>(rank)];
  if (values.size() == 1) {
    s.copy(dst, own);
    return;
  }
  typename S::Ptr into = dst;
  if (s.overlaps(dst, own) && !(rank == 0 && s.same(dst, own))) into = s.accumulator(dst, own);
  s.reduce(into, values[0], values[1]);
  for (std::size_t q = 2; q < values.size(); ++q) s.reduce(into, into, values[q]);
  if (into != dst) s.copy(dst, into);
}

// Runs the slice of op that starts at element lo on rank `rank` of `nranks`; false if it must wait
// (a write, a send or a receive cannot go yet; the consumer records what it waits for). `values` is
// the caller's room for ReduceAll's operands (kept between calls: no allocation once sized). Always
// inlined: the executors' per-slice cost is what it was with the dispatch written in the runner (not
// inlined, a call through the consumer object costs them a sixth more instructions per call).
template <class S>
[[gnu::always_inline]] inline bool dispatchSlice(S& s, const Op& op, int rank, int nranks, std::int64_t lo, std::vector<typename S::In>& values) {
  using In = typename S::In;
  using Ptr = typename S::Ptr;
  const In src = op.reads() ? In(s.at(op.src, lo)) : In{};
  const Ptr dst = op.writes() ? s.at(op.dst, lo) : Ptr{};
  if (op.writes() && !s.writable(dst)) return false;
  switch (op.kind) {
    case OpKind::Send: return s.send(op, src);
    case OpKind::Copy: s.copy(dst, src); return true;
    case OpKind::Recv:
    case OpKind::RecvReduce: {
      const bool copy = op.kind == OpKind::Recv;
      In in{};
      if (!s.receive(op, op.peer, copy ? dst : Ptr{}, 0, in)) return false;
      if (copy)
        s.copy(dst, in);
      else
        s.reduce(dst, src, in);
      s.release(op, op.peer);
      return true;
    }
    case OpKind::ReduceAll: {
      values.resize(static_cast<std::size_t>(nranks));
      bool all = true;
      for (int q = 0; q < nranks; ++q) {  // every receive is asked for (a transport may post them all at once)
        auto& v = values[static_cast<std::size_t>(q)];
        if (q == rank)
          v = src;
        else
          all = s.receive(op, q, Ptr{}, receiveIndex(op, q, rank), v) && all;
      }
      if (!all) return false;
      foldRankOrder(s, std::span<const In>(values), rank, dst);
      for (int q = 0; q < nranks; ++q)
        if (q != rank) s.release(op, q);
      return true;
    }
  }
  return true;
}

}  // namespace cclab::plan
