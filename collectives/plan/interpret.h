// A single-thread interpreter that runs a Plan on host memory.
//
// It is the reference semantics of a plan and the most exhaustive check we have: it executes each
// rank's ops in the executors' order (slice_walk.h), and it models what the executors do that could
// deadlock:
//  - single-copy sends: a sent slice stays in the sender's buffer until the receiver consumed it, so a
//    rank that wants to overwrite it waits (write-after-send hazard);
//  - a bounded channel: at most `channelCapacity` unconsumed slices per ordered pair of ranks.
// Ranks run round-robin, each as far as it can; when no rank can move, the plan deadlocks and
// interpret() throws std::runtime_error naming every blocked rank and the op it waits in.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "collectives/core/errors.h"
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
  std::int64_t channelCapacity = 0;  // 0: unbounded
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
  std::map<std::pair<int, int>, std::deque<detail::InFlight<T>>> channels;  // (from, to)
  std::vector<SliceCursor> cursors;
  cursors.reserve(n);
  for (int r = 0; r < n; ++r) cursors.emplace_back(plan.ranks[r], options.sliceElems);

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
    for (const auto& [key, queue] : channels) {
      if (key.first != r) continue;
      for (const auto& f : queue)
        if (f.source < p + len && p < f.source + f.length) return true;
    }
    return false;
  };
  // Runs rank r's current slice; returns false if it must wait.
  auto step = [&](int r) -> bool {
    auto& cur = cursors[r];
    const Op& op = plan.ranks[r][cur.opIndex()];
    const auto [lo, hi] = cur.sliceRange();
    const std::int64_t len = hi - lo;
    T* src = op.reads() ? base(r, op.src.buf) + op.src.offset + lo : nullptr;
    T* dst = op.writes() ? base(r, op.dst.buf) + op.dst.offset + lo : nullptr;
    if (op.kind == OpKind::Send) {
      auto& q = channels[{r, op.peer}];
      if (options.channelCapacity > 0 && static_cast<std::int64_t>(q.size()) >= options.channelCapacity)
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
    auto& q = channels[{op.peer, r}];
    if (q.empty()) return false;
    auto& front = q.front();
    if (front.length != len) {
      std::ostringstream m;
      m << "interpret: rank " << r << " op " << cur.opIndex() << " (" << describe(op) << ") expects " << len
        << " elements but rank " << op.peer << " sent " << front.length;
      throw std::runtime_error(m.str());
    }
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
    for (int r = 0; r < n; ++r) {
      while (!cursors[r].done() && step(r)) {
        cursors[r].advance();
        progress = true;
      }
      allDone = allDone && cursors[r].done();
    }
    if (allDone) break;
    if (!progress) {
      std::ostringstream m;
      m << "interpret: plan " << name(plan.collective) << "/" << name(plan.algorithm) << " deadlocks:";
      for (int r = 0; r < n; ++r)
        if (!cursors[r].done())
          m << " rank " << r << " waits in op " << cursors[r].opIndex() << " ("
            << describe(plan.ranks[r][cursors[r].opIndex()]) << ") slice " << cursors[r].sliceIndex() << ";";
      throw std::runtime_error(m.str());
    }
  }
  for (const auto& [key, queue] : channels)
    if (!queue.empty()) {
      std::ostringstream m;
      m << "interpret: " << queue.size() << " slice(s) sent from rank " << key.first << " to rank " << key.second
        << " were never received";
      throw std::runtime_error(m.str());
    }
}

}  // namespace cclab::plan
