// Small helpers the generators share to write ops (internal to collectives/plan).
#pragma once

#include <cstdint>

#include "collectives/plan/plan.h"

namespace cclab::plan::build {

inline Range in(std::int64_t offset, std::int64_t count) { return {Buf::Input, offset, count}; }
inline Range out(std::int64_t offset, std::int64_t count) { return {Buf::Output, offset, count}; }
inline Range scratch(std::int64_t offset, std::int64_t count) { return {Buf::Scratch, offset, count}; }

// Appends to one rank's op list; ops of count 0 are dropped (both ends of a message compute the same
// count from the same chunk, so both drop it).
class Ops {
 public:
  Ops(Plan& plan, int rank, int channel = 0) : ops_(plan.ranks[rank]), channel_(static_cast<std::uint8_t>(channel)) {}
  void send(int peer, Range src, int phase) { add({OpKind::Send, peer, phase, src, {}}); }
  void recv(int peer, Range dst, int phase) { add({OpKind::Recv, peer, phase, {}, dst}); }
  // dst = src (op) received
  void recvReduce(int peer, Range src, Range dst, int phase) { add({OpKind::RecvReduce, peer, phase, src, dst}); }
  void copy(Range src, Range dst, int phase) { add({OpKind::Copy, -1, phase, src, dst}); }
  // dst = every rank's message (this rank's: src) reduced in rank order
  void reduceAll(Range src, Range dst, int phase) { add({OpKind::ReduceAll, -1, phase, src, dst}); }

 private:
  void add(Op op) {
    op.channel = channel_;
    if (op.count() > 0) ops_.push_back(op);
  }
  std::vector<Op>& ops_;
  std::uint8_t channel_;
};

// A plan with its header filled in and one empty op list per rank.
inline Plan emptyPlan(Collective c, Algorithm a, int nranks, std::int64_t count, int root = 0, int nphases = 1) {
  Plan p;
  p.collective = c;
  p.algorithm = a;
  p.nranks = nranks;
  p.count = count;
  p.root = root;
  p.nphases = nphases;
  p.ranks.resize(static_cast<std::size_t>(nranks));
  return p;
}

inline int mod(int a, int n) { return ((a % n) + n) % n; }

}  // namespace cclab::plan::build
