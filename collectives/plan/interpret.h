// A single-thread interpreter that runs a Plan on host memory.
//
// It is the reference semantics of a plan and the most exhaustive check we have: it executes each
// rank's ops in the executors' order (slice_walk.h), and it models what the executors do that could
// deadlock:
//  - single-copy sends: a sent slice stays in the sender's buffer until the receiver consumed it, so a
//    rank that wants to overwrite it waits (write-after-send hazard);
//  - a bounded connection: at most `connectionCapacity` unconsumed slices per (channel, from, to).
// Every (rank, channel) is a cursor of its own when `channelsInterleaved` (the executors that run
// channels concurrently), which waits at a phase's first op until its phase deps are met
// (phase_deps.h); otherwise a rank runs its ops one after the other, in sequentialOps() order. Cursors run
// round-robin, each as far as it can; when none can move, the plan deadlocks and interpret() throws
// std::runtime_error naming every blocked rank and the op it waits in.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/plan/phase_deps.h"
#include "collectives/plan/plan.h"
#include "collectives/plan/slice_walk.h"

namespace cclab::plan {

template <class T>
struct RankBuffers {
  T* input = nullptr;
  T* output = nullptr;
  T* scratch = nullptr;
};

struct InterpretOptions {
  std::int64_t sliceElems = 0;     // 0: every op is one slice
  std::int64_t connectionCapacity = 0;  // 0: unbounded
  bool channelsInterleaved = true;
};

namespace detail {

template <class T>
struct InFlight {
  std::vector<T> data;
  const T* source = nullptr;  // where the sender still holds it (single-copy model)
  std::int64_t length = 0;
};

}  // namespace detail

// Combine: T(const T& local, const T& received) -> the reduced value.
template <class T, class Combine>
void interpret(const Plan& plan, std::span<const RankBuffers<T>> bufs, Combine combine,
               InterpretOptions options = {}) {
  if (static_cast<int>(bufs.size()) != plan.nranks || static_cast<int>(plan.ranks.size()) != plan.nranks)
    throw InvalidArgument("interpret: need one RankBuffers per rank");
  const int n = plan.nranks;
  using Key = std::tuple<int, int, int>;  // channel, from, to
  std::map<Key, std::deque<detail::InFlight<T>>> connections;
  struct Cursor {
    int rank;
    int channel;  // -1: all the rank's channels, one after the other
    std::span<const Op> ops;
    std::size_t base;  // index of ops[0] in the rank's list
    SliceCursor walk;
    int gatesPassed = -1;  // the last phase whose deps were met
  };
  std::vector<Cursor> cursors;
  std::vector<SequentialOps> sequential(static_cast<std::size_t>(n));  // when not interleaved
  const PhaseGates gates(plan.deps);
  const bool interleaved = options.channelsInterleaved && plan.nchannels > 1;
  std::vector<std::size_t> firstCursor(static_cast<std::size_t>(n));  // of each rank (its channels follow)
  for (int r = 0; r < n; ++r) {
    const auto& all = plan.ranks[static_cast<std::size_t>(r)];
    firstCursor[static_cast<std::size_t>(r)] = cursors.size();
    if (!interleaved) {
      sequential[static_cast<std::size_t>(r)] = sequentialOps(plan, r);
      const std::span<const Op> ops = sequential[static_cast<std::size_t>(r)].ops();
      cursors.push_back({r, -1, ops, 0, SliceCursor(ops, options.sliceElems)});
      continue;
    }
    int c = 0;
    for (std::span<const Op> ch : channelOps(plan, r))
      cursors.push_back({r, c++, ch, static_cast<std::size_t>(ch.data() - all.data()), SliceCursor(ch, options.sliceElems)});
  }
  // Are the deps of cursor c's current phase met (interleaved channels only)?
  auto gateOpen = [&](Cursor& c) {
    if (c.channel < 0 || gates.empty()) return true;
    const int phase = c.ops[c.walk.opIndex()].phase;
    if (phase == c.gatesPassed) return true;
    const auto walkerOf = [&](int channel) {
      return &cursors[firstCursor[static_cast<std::size_t>(c.rank)] + static_cast<std::size_t>(channel)].walk;
    };
    if (!gatesMet(gates, c.channel, phase, walkerOf)) return false;
    c.gatesPassed = phase;
    return true;
  };

  auto base = [&](int r, Buf b) -> T* {
    switch (b) {
      case Buf::Input: return bufs[r].input;
      case Buf::Output: return bufs[r].output;
      case Buf::Scratch: return bufs[r].scratch;
    }
    return nullptr;
  };
  // Would writing [p, p+len) on rank r overwrite a slice r sent that is not consumed yet?
  auto writeBlocked = [&](int r, const T* p, std::int64_t len) {
    for (const auto& [key, queue] : connections) {
      if (std::get<1>(key) != r) continue;
      for (const auto& f : queue)
        if (f.source < p + len && p < f.source + f.length) return true;
    }
    return false;
  };
  auto mismatch = [&](const Cursor& c, const Op& op, std::int64_t len, int peer, std::int64_t sent) {
    std::ostringstream m;
    m << "interpret: rank " << c.rank << " op " << c.base + c.walk.opIndex() << " (" << describe(op) << ") expects " << len
      << " elements but rank " << peer << " sent " << sent;
    throw std::runtime_error(m.str());
  };
  // Runs a cursor's current slice; returns false if it must wait.
  auto step = [&](Cursor& c) -> bool {
    const int r = c.rank;
    const Op& op = c.ops[c.walk.opIndex()];
    const auto [lo, hi] = c.walk.sliceRange();
    const std::int64_t len = hi - lo;
    T* src = op.reads() ? base(r, op.src.buf) + op.src.offset + lo : nullptr;
    T* dst = op.writes() ? base(r, op.dst.buf) + op.dst.offset + lo : nullptr;
    if (op.kind == OpKind::Send) {
      auto& q = connections[{op.channel, r, op.peer}];
      if (options.connectionCapacity > 0 && static_cast<std::int64_t>(q.size()) >= options.connectionCapacity)
        return false;
      q.push_back({std::vector<T>(src, src + len), src, len});
      return true;
    }
    if (writeBlocked(r, dst, len)) return false;
    if (op.kind == OpKind::Copy) {
      std::vector<T> tmp(src, src + len);
      std::copy(tmp.begin(), tmp.end(), dst);
      return true;
    }
    if (op.kind == OpKind::ReduceAll) {
      for (int q = 0; q < n; ++q) {
        if (q == r) continue;
        auto& queue = connections[{op.channel, q, r}];
        if (queue.empty()) return false;
        if (queue.front().length != len) mismatch(c, op, len, q, queue.front().length);
      }
      std::vector<T> acc;  // rank 0's value first, then each next rank's folded in
      for (int q = 0; q < n; ++q) {
        const T* v = q == r ? src : connections[{op.channel, q, r}].front().data.data();
        if (q == 0)
          acc.assign(v, v + len);
        else
          for (std::int64_t i = 0; i < len; ++i) acc[i] = combine(acc[i], v[i]);
      }
      std::copy(acc.begin(), acc.end(), dst);
      for (int q = 0; q < n; ++q)
        if (q != r) connections[{op.channel, q, r}].pop_front();
      return true;
    }
    auto& q = connections[{op.channel, op.peer, r}];
    if (q.empty()) return false;
    auto& front = q.front();
    if (front.length != len) mismatch(c, op, len, op.peer, front.length);
    if (op.kind == OpKind::Recv) {
      std::copy(front.data.begin(), front.data.end(), dst);
    } else {
      for (std::int64_t i = 0; i < len; ++i) dst[i] = combine(src[i], front.data[i]);
    }
    q.pop_front();
    return true;
  };

  for (;;) {
    bool progress = false, allDone = true;
    for (auto& c : cursors) {
      while (!c.walk.done() && gateOpen(c) && step(c)) {
        c.walk.advance();
        progress = true;
      }
      allDone = allDone && c.walk.done();
    }
    if (allDone) break;
    if (!progress) {
      std::ostringstream m;
      m << "interpret: plan " << name(plan.collective) << "/" << name(plan.algorithm) << " deadlocks:";
      for (const auto& c : cursors)
        if (!c.walk.done())
          m << " rank " << c.rank << " waits in op " << c.base + c.walk.opIndex() << " ("
            << describe(c.ops[c.walk.opIndex()]) << ") slice " << c.walk.sliceIndex() << ";";
      throw std::runtime_error(m.str());
    }
  }
  for (const auto& [key, queue] : connections)
    if (!queue.empty()) {
      std::ostringstream m;
      m << "interpret: " << queue.size() << " slice(s) sent from rank " << std::get<1>(key) << " to rank "
        << std::get<2>(key) << " on channel " << std::get<0>(key) << " were never received";
      throw std::runtime_error(m.str());
    }
}

}  // namespace cclab::plan
