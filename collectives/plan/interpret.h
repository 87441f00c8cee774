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

template <class... A>
[[noreturn]] void fail(const A&... a) {
  std::ostringstream m;
  (m << ... << a);
  throw std::runtime_error(m.str());
}

// One rank's transport (plan_runner.h) and moves (op_dispatch.h) over the connections of the whole
// plan: a send queues a copy of the slice and keeps it in the sender's buffer until it is received
// (single copy), at most `capacity` per connection; elements move by assignment and reduce by combine.
template <class T, class Combine>
class Interpreter {
 public:
  struct InFlight {
    std::vector<T> data;
    const T* source;  // where the sender still holds it
  };
  using Connections = std::map<std::tuple<int, int, int>, std::deque<InFlight>>;  // channel, from, to
  using LaneData = NoLaneData;
  using Lane = RunnerLane<NoLaneData>;

  Interpreter(Connections& c, const RankBuffers<T>& b, int rank, std::int64_t capacity, const Combine& combine)
      : c_(c), b_(b), rank_(rank), capacity_(capacity), combine_(combine) {}
  std::byte* address(const Range& r, std::int64_t lo) const {
    T* base = r.buf == Buf::Input ? b_.input : r.buf == Buf::Output ? b_.output : b_.scratch;
    return reinterpret_cast<std::byte*>(base + r.offset + lo);
  }
  static void startLane(Lane&) {}
  // No write over a slice this rank sent that is not consumed yet.
  bool writable(Lane&, std::byte* dst, std::size_t bytes) const {
    const T* p = at(dst);
    for (const auto& [key, queue] : c_)
      for (const InFlight& f : queue)
        if (std::get<1>(key) == rank_ && f.source < p + bytes / sizeof(T) && p < f.source + f.data.size()) return false;
    return true;
  }
  bool trySend(Lane&, const Op& op, const std::byte* src, std::size_t bytes) {
    auto& q = c_[{op.channel, rank_, op.peer}];
    if (capacity_ > 0 && static_cast<std::int64_t>(q.size()) >= capacity_) return false;
    q.push_back({std::vector<T>(at(src), at(src) + bytes / sizeof(T)), at(src)});
    return true;
  }
  const std::byte* tryReceive(Lane& lane, const Op& op, int peer, std::byte*, std::size_t bytes, int) {
    if (lane.blocked) return nullptr;  // a ReduceAll asks no further (and checks no length) once one is missing
    auto& q = c_[{op.channel, peer, rank_}];
    if ((lane.blocked = q.empty())) return nullptr;
    if (q.front().data.size() != bytes / sizeof(T))
      fail("interpret: rank ", rank_, " op ", lane.opIndex(), " (", describe(op), ") expects ", bytes / sizeof(T),
           " elements but rank ", peer, " sent ", q.front().data.size());
    return reinterpret_cast<const std::byte*>(q.front().data.data());
  }
  void release(Lane&, const Op& op, int peer) { c_[{op.channel, peer, rank_}].pop_front(); }
  static bool drained(Lane&) { return true; }
  static void waitForLanes(std::span<Lane>, Lane&, int, bool) {}  // never called: interpret() drives pass()

  void copy(std::byte* dst, const std::byte* src, std::size_t n) const {
    if (dst < src)
      std::copy(at(src), at(src) + n, at(dst));
    else if (dst > src)
      std::copy_backward(at(src), at(src) + n, at(dst) + n);
  }
  void reduce(std::byte* dst, const std::byte* a, const std::byte* b, std::size_t n) const {
    for (std::size_t i = 0; i < n; ++i) at(dst)[i] = combine_(at(a)[i], at(b)[i]);
  }
  std::byte* scratch(std::size_t n) {
    if (acc_.size() < n) acc_.resize(n);
    return reinterpret_cast<std::byte*>(acc_.data());
  }

 private:
  static T* at(std::byte* p) { return reinterpret_cast<T*>(p); }
  static const T* at(const std::byte* p) { return reinterpret_cast<const T*>(p); }
  Connections& c_;
  const RankBuffers<T>& b_;
  int rank_;
  std::int64_t capacity_;
  const Combine& combine_;
  std::vector<T> acc_;  // ReduceAll's accumulator when dst overlaps src
};

}  // namespace detail

// Combine: T(const T& local, const T& received) -> the reduced value.
template <class T, class Combine>
void interpret(const Plan& plan, std::span<const RankBuffers<T>> bufs, Combine combine,
               InterpretOptions options = {}) {
  if (static_cast<int>(bufs.size()) != plan.nranks || static_cast<int>(plan.ranks.size()) != plan.nranks)
    throw InvalidArgument("interpret: need one RankBuffers per rank");
  const auto n = static_cast<std::size_t>(plan.nranks);
  using Rank = detail::Interpreter<T, Combine>;
  typename Rank::Connections connections;
  std::vector<Rank> ranks;
  std::vector<RunnerState<NoLaneData>> states(n);
  std::vector<PlanRunner<Rank, Rank&>> runners;
  ranks.reserve(n);
  runners.reserve(n);
  const RunnerOptions ro{sizeof(T), nullptr, options.sliceElems, options.channelsInterleaved && plan.nchannels > 1};
  for (std::size_t r = 0; r < n; ++r) {
    ranks.emplace_back(connections, bufs[r], static_cast<int>(r), options.connectionCapacity, combine);
    runners.emplace_back(ranks[r], states[r], plan, static_cast<int>(r), ro, ranks[r]).start();
  }
  // Every rank's lanes in turn, each as far as it goes, until all are done or none can move.
  for (bool running = true; running;) {
    bool moved = false;
    running = false;
    for (auto& runner : runners) running = runner.pass(moved) || running;
    if (!running || moved) continue;
    std::ostringstream m;
    for (std::size_t r = 0; r < n; ++r)
      for (const auto& lane : runners[r].lanes())
        if (!lane.finished)
          m << " rank " << r << " waits in op " << lane.opIndex() << " (" << describe(lane.ops[lane.walk.opIndex()])
            << ") slice " << lane.walk.sliceIndex() << ";";
    detail::fail("interpret: plan ", name(plan.collective), "/", name(plan.algorithm), " deadlocks:", m.str());
  }
  for (const auto& [key, queue] : connections)
    if (!queue.empty())
      detail::fail("interpret: ", queue.size(), " slice(s) sent from rank ", std::get<1>(key), " to rank ",
                   std::get<2>(key), " on channel ", std::get<0>(key), " were never received");
}

}  // namespace cclab::plan
