// A single-thread interpreter that runs a Plan on host memory.
//
// It is the reference semantics of a plan and the most exhaustive check we have. It runs every rank on
// the executors' own core, PlanRunner (plan_runner.h: the lanes, the walk of slice_walk.h, the phase
// gates, the op rules of op_dispatch.h), over a transport of its own that models what the executors
// do that could deadlock:
//  - single-copy sends: a sent slice stays in the sender's buffer until the receiver consumed it, so a
//    rank that wants to overwrite it waits (write-after-send hazard);
//  - a bounded connection: at most `connectionCapacity` unconsumed slices per (channel, from, to).
// Elements are typed (T may be symbolic, validate.cc), moved by assignment and combined by `combine`.
// A rank has a lane per channel when `channelsInterleaved` (the executors that run channels
// concurrently), gated by its phase deps; otherwise one lane in sequentialOps() order. The ranks'
// lanes run round-robin, each as far as it can; when none can move, the plan deadlocks and
// interpret() throws std::runtime_error naming every blocked rank and the op it waits in.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/plan/plan.h"
#include "collectives/plan/plan_runner.h"

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

template <class T>
const T* typed(const std::byte* p) {
  return reinterpret_cast<const T*>(p);
}

// The interpreter's moves (op_dispatch.h): typed elements, symbolic ones too, copied by assignment.
template <class T, class Combine>
struct TypedMoves {
  const Combine* combine;
  std::vector<T> acc;
  void copy(std::byte* dst, const std::byte* src, std::size_t n) const {
    T* d = reinterpret_cast<T*>(dst);
    const T* s = typed<T>(src);
    if (d < s)
      std::copy(s, s + n, d);
    else if (d > s)
      std::copy_backward(s, s + n, d + n);
  }
  void reduce(std::byte* dst, const std::byte* a, const std::byte* b, std::size_t n) const {
    T* d = reinterpret_cast<T*>(dst);
    for (std::size_t i = 0; i < n; ++i) d[i] = (*combine)(typed<T>(a)[i], typed<T>(b)[i]);
  }
  std::byte* scratch(std::size_t n) {
    if (acc.size() < n) acc.resize(n);
    return reinterpret_cast<std::byte*>(acc.data());
  }
};

// One rank's transport (plan_runner.h) over the connections of the whole plan: a send queues a copy of
// the slice and keeps it in the sender's buffer until it is received (single copy), at most
// `capacity` per connection.
template <class T>
class InterpretTransport {
 public:
  using LaneData = NoLaneData;
  using Lane = RunnerLane<NoLaneData>;
  using Connections = std::map<std::tuple<int, int, int>, std::deque<InFlight<T>>>;  // channel, from, to

  InterpretTransport(Connections& c, const RankBuffers<T>& b, int rank, std::int64_t capacity)
      : c_(c), b_(b), rank_(rank), capacity_(capacity) {}
  std::byte* address(const Range& r, std::int64_t lo) const {
    T* base = r.buf == Buf::Input ? b_.input : r.buf == Buf::Output ? b_.output : b_.scratch;
    return reinterpret_cast<std::byte*>(base + r.offset + lo);
  }
  static void startLane(Lane&) {}
  // Would writing there overwrite a slice this rank sent that is not consumed yet?
  bool writable(Lane&, std::byte* dst, std::size_t bytes) const {
    const T* p = typed<T>(dst);
    const auto len = static_cast<std::int64_t>(bytes / sizeof(T));
    for (const auto& [key, queue] : c_) {
      if (std::get<1>(key) != rank_) continue;
      for (const auto& f : queue)
        if (f.source < p + len && p < f.source + f.length) return false;
    }
    return true;
  }
  bool trySend(Lane&, const Op& op, const std::byte* src, std::size_t bytes) {
    auto& q = c_[{op.channel, rank_, op.peer}];
    if (capacity_ > 0 && static_cast<std::int64_t>(q.size()) >= capacity_) return false;
    const T* s = typed<T>(src);
    const auto len = static_cast<std::int64_t>(bytes / sizeof(T));
    q.push_back({std::vector<T>(s, s + len), s, len});
    return true;
  }
  // The slice from peer; a ReduceAll asks no further (and checks no length) once one is missing.
  const std::byte* tryReceive(Lane& lane, const Op& op, int peer, std::byte*, std::size_t bytes, int) {
    if (lane.blocked) return nullptr;
    auto& q = c_[{op.channel, peer, rank_}];
    lane.blocked = q.empty();
    if (q.empty()) return nullptr;
    const auto len = static_cast<std::int64_t>(bytes / sizeof(T));
    if (q.front().length != len) {
      std::ostringstream m;
      m << "interpret: rank " << rank_ << " op " << lane.opIndex() << " (" << describe(op) << ") expects " << len
        << " elements but rank " << peer << " sent " << q.front().length;
      throw std::runtime_error(m.str());
    }
    return reinterpret_cast<const std::byte*>(q.front().data.data());
  }
  void release(Lane&, const Op& op, int peer) { c_[{op.channel, peer, rank_}].pop_front(); }
  static bool drained(Lane&) { return true; }
  static void waitForLanes(std::span<Lane>, Lane&, int, bool) {}  // never called: interpret() drives pass()

 private:
  Connections& c_;
  const RankBuffers<T>& b_;
  int rank_;
  std::int64_t capacity_;
};

}  // namespace detail

// Combine: T(const T& local, const T& received) -> the reduced value.
template <class T, class Combine>
void interpret(const Plan& plan, std::span<const RankBuffers<T>> bufs, Combine combine,
               InterpretOptions options = {}) {
  if (static_cast<int>(bufs.size()) != plan.nranks || static_cast<int>(plan.ranks.size()) != plan.nranks)
    throw InvalidArgument("interpret: need one RankBuffers per rank");
  const auto n = static_cast<std::size_t>(plan.nranks);
  using Transport = detail::InterpretTransport<T>;
  using Runner = PlanRunner<Transport, detail::TypedMoves<T, Combine>>;
  typename Transport::Connections connections;
  std::vector<Transport> transports;
  std::vector<RunnerState<NoLaneData>> states(n);
  std::vector<Runner> runners;
  transports.reserve(n);
  runners.reserve(n);
  const RunnerOptions ro{sizeof(T), nullptr, options.sliceElems, options.channelsInterleaved && plan.nchannels > 1};
  for (std::size_t r = 0; r < n; ++r) {
    transports.emplace_back(connections, bufs[r], static_cast<int>(r), options.connectionCapacity);
    runners.emplace_back(transports[r], states[r], plan, static_cast<int>(r), ro,
                         detail::TypedMoves<T, Combine>{&combine, {}});
    runners[r].start();
  }
  // Every rank's lanes in turn, each as far as it goes, until all are done or none can move.
  for (;;) {
    bool moved = false, running = false;
    for (Runner& runner : runners) running = runner.pass(moved) || running;
    if (!running) break;
    if (!moved) {
      std::ostringstream m;
      m << "interpret: plan " << name(plan.collective) << "/" << name(plan.algorithm) << " deadlocks:";
      for (std::size_t r = 0; r < n; ++r)
        for (const auto& lane : runners[r].lanes())
          if (!lane.finished)
            m << " rank " << r << " waits in op " << lane.opIndex() << " (" << describe(lane.ops[lane.walk.opIndex()])
              << ") slice " << lane.walk.sliceIndex() << ";";
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
