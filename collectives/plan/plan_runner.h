// PlanRunner: the one executor core. It runs one rank's ops of a Plan over a transport that moves the
// bytes (host slots, host LL lines, shared-memory slots, shared-memory LL lines, MPI links), and owns
// what every executor does alike: the rank's lanes (one per channel, interleaved, or one lane in
// sequentialOps() order), the walk over (op, slice) pairs (slice_walk.h), the phase gates between a
// rank's channels (phase_deps.h), the op rules (op_dispatch.h: dispatch, write-after-send check,
// ReduceAll's rank-order fold), and the round-robin loop that advances whichever lane can move and
// hands the rest to the transport's wait. The interpreter (interpret.h) runs on it with a transport
// of its own and typed moves; the CUDA lowering shares the op rules only.
//
// A transport T (in the spirit of NCCL's primitives: one interface, the protocol a parameter) has a
// per-lane state `T::LaneData` and answers, for the runner's current slice:
//   std::byte* address(const Range& r, std::int64_t lo)      where element lo of r lies on this rank
//   void startLane(Lane&)                                     a lane starts a call (clear its state)
//   bool writable(Lane&, std::byte* dst, std::size_t bytes)   may dst be written (no unread send from there)?
//   bool trySend(Lane&, const Op&, const std::byte* src, std::size_t bytes)
//   const std::byte* tryReceive(Lane&, const Op&, int peer, std::byte* into, std::size_t bytes, int index)
//       the next slice from peer (index: its place among the op's receives, 0 for Recv; into: dst of
//       a Recv, where the transport may put it), or nullptr while it is not there
//   void release(Lane&, const Op&, int peer)                 the slice tryReceive gave is read
//   bool drained(Lane&)                                       may the lane end (its sends read)?
//   void waitForLanes(std::span<Lane> lanes, Lane& first, int waiting, bool moved)
//       no lane can move (`waiting` of them blocked in the transport, `first` the first): return when
//       one may, or throw (timeout, abort) naming what `first` waits for.
// A try-call that returns false/nullptr records in its LaneData what it waits for (the first such
// record of a step counts: Lane::blocked). A transport whose calls block until they can proceed (the
// one-lane paths with their own bounded waits) simply always succeeds.
//
// ReduceAll (plan.h) takes one slice from every other rank and folds them in rank order, v_0 (op) v_1
// (op) ... (op) v_{p-1} with this rank's src at its own place, so every rank computes the same bits;
// every slice must be there before any is read, and all are released after the fold. Moves copy and
// reduce the elements: ByteMoves (memmove, the dtype's reduce) for every executor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "collectives/core/dtype.h"
#include "collectives/plan/op_dispatch.h"
#include "collectives/plan/phase_deps.h"
#include "collectives/plan/plan.h"
#include "collectives/plan/slice_walk.h"

namespace cclab::plan {

// One lane of a rank: one channel's ops (interleaved), or all its ops in sequentialOps() order.
template <class Data>
struct RunnerLane {
  int channel = -1;  // -1: the one sequential lane
  std::span<const Op> ops;
  std::size_t base = 0;  // index of ops[0] in the rank's op list
  SliceCursor walk{std::span<const Op>(), 0};
  bool finished = false;
  bool gated = false;    // waits at its phase's first slice for a dep (no transport wait)
  bool blocked = false;  // the transport recorded what the current step waits for
  int gatesPassed = -1;  // the last phase whose deps were met
  Data data{};           // the transport's, kept between calls
  bool whole = false;    // run() of one lane of whole ops: `at` is the walk, not `walk`
  std::size_t at = 0;
  // The op the lane stands at, as an index in the rank's op list (its end once done).
  [[nodiscard]] std::size_t opIndex() const {
    return base + (whole ? at : walk.done() ? ops.size() : walk.opIndex());
  }
};

// The LaneData of a transport that keeps nothing per lane.
struct NoLaneData {};

// A rank's runner state, kept between calls so that a call allocates nothing once shapes repeat.
template <class Data>
struct RunnerState {
  std::vector<RunnerLane<Data>> lanes;  // the first `used` are this call's
  std::size_t used = 0;
  std::vector<int> laneOf;  // per channel: its lane (-1: no ops on this rank)
  std::vector<PhaseDep> gatesOf;  // the deps `gates` was made from (rebuilt when a plan's differ)
  PhaseGates gates;
  SequentialOps sequential;
  std::vector<const std::byte*> values;  // ReduceAll: every rank's slice
  std::vector<std::byte> acc;            // ReduceAll's accumulator when dst overlaps src
  [[nodiscard]] std::span<RunnerLane<Data>> active() { return {lanes.data(), used}; }
  [[nodiscard]] std::span<const RunnerLane<Data>> active() const { return {lanes.data(), used}; }
};

struct RunnerOptions {
  std::size_t elemSize = 4;
  ReduceFn reduce = nullptr;
  std::int64_t sliceElems = 0;  // 0: whole ops
  bool interleaved = true;      // a lane per channel; false: one lane in sequentialOps() order
};

// The moves of the byte executors (op_dispatch.h): memmove copies, the dtype's reduce, and the
// rank's accumulator for a ReduceAll whose dst overlaps its own operand.
struct ByteMoves {
  std::size_t elemSize = 4;
  ReduceFn fn = nullptr;
  std::vector<std::byte>* acc = nullptr;
  void copy(std::byte* dst, const std::byte* src, std::size_t elems) const {
    if (dst != src) std::memmove(dst, src, elems * elemSize);
  }
  void reduce(std::byte* dst, const std::byte* a, const std::byte* b, std::size_t elems) const { fn(dst, a, b, elems); }
  std::byte* scratch(std::size_t elems) const {
    if (acc->size() < elems * elemSize) acc->resize(elems * elemSize);
    return acc->data();
  }
};

// The defaults of a transport whose calls wait themselves until they can proceed (one sequential
// lane, so the runner never waits) and that copies what it sends and receives (the LL paths): nothing
// to wait for before a write or at the end, nothing to release.
struct WaitingTransport {
  using LaneData = NoLaneData;
  using Lane = RunnerLane<NoLaneData>;
  static void startLane(Lane&) {}
  static bool writable(Lane&, const std::byte*, std::size_t) { return true; }
  static bool drained(Lane&) { return true; }
  static void release(Lane&, const Op&, int) {}
  static void waitForLanes(std::span<Lane>, Lane&, int, bool) {}  // never called: no call fails
};

// Where receive `index` of op's current slice may land in a rank's staging buffer `v`: a slot of
// `bytes` per receive (nranks - 1 for ReduceAll, else 1), the buffer grown at the first (index 0),
// before any slot of the slice is handed out.
inline std::byte* stagingSlot(std::vector<std::byte>& v, const Op& op, int nranks, int index, std::size_t bytes) {
  if (index == 0) {
    const std::size_t n = op.kind == OpKind::ReduceAll ? static_cast<std::size_t>(nranks - 1) : 1;
    if (v.size() < n * bytes) v.resize(n * bytes);
  }
  return v.data() + static_cast<std::size_t>(index) * bytes;
}

// Moves: how elements are copied and reduced (ByteMoves, or a reference to the interpreter's typed moves).
template <class Transport, class Moves = ByteMoves>
class PlanRunner {
 public:
  using Lane = RunnerLane<typename Transport::LaneData>;
  using State = RunnerState<typename Transport::LaneData>;

  PlanRunner(Transport& t, State& s, const Plan& plan, int rank, const RunnerOptions& o, Moves m)
      : t_(t), s_(s), plan_(plan), rank_(rank), o_(o), m_(m) {}
  PlanRunner(Transport& t, State& s, const Plan& plan, int rank, const RunnerOptions& o)
    requires std::is_same_v<Moves, ByteMoves>
      : PlanRunner(t, s, plan, rank, o, ByteMoves{o.elemSize, o.reduce, &s.acc}) {}

  // Runs the rank's ops to the end (every lane's sends read); throws what the transport throws.
  // Round robin: each lane runs as far as it can; the rank waits only when none can move.
  void run() {
    const bool whole = !o_.interleaved && o_.sliceElems <= 0;
    startLanes(whole);
    if (whole) return runWhole(s_.lanes[0]);
    for (;;) {
      bool moved = false;
      if (!pass(moved)) return;
      Lane* first = nullptr;
      int waiting = 0;
      if (blocked(first, waiting)) t_.waitForLanes(s_.active(), *first, waiting, moved);
    }
  }

  // The parts of run(), for a caller that runs several ranks on one thread (ll_multi_run.cc) or
  // checks a plan (interpret.h): start() sets up the lanes; pass() runs each lane as far as it goes
  // (moved: whether any did) and says whether any lane is still running.
  void start() { startLanes(false); }
  bool pass(bool& moved) {
    bool running = false;
    for (Lane& lane : s_.active()) {
      if (lane.finished) continue;
      while (!lane.walk.done() && gateOpen(lane) && step(lane)) {
        lane.walk.advance();
        moved = true;
      }
      lane.blocked = false;
      if (lane.walk.done() && t_.drained(lane)) {
        lane.finished = true;
        continue;
      }
      running = true;
    }
    return running;
  }
  // After a pass that left lanes running: is there a wait to do, on the `waiting` lanes blocked in the
  // transport (`first` the first of them)? Every running lane is blocked in the transport (set in this
  // pass), or gated: at a phase whose deps another lane of this rank has not met yet. A gate opens only
  // when that lane moves, never from another thread, so a gated lane is no wait's business: if its gate
  // opened during the pass (the lane it waits for ran after it), the next pass runs it at once (false).
  bool blocked(Lane*& first, int& waiting) {
    int reopened = 0;
    for (Lane& lane : s_.active()) {
      if (lane.finished) continue;
      if (lane.gated) {
        reopened += gateOpen(lane) ? 1 : 0;
        if (lane.gated) continue;  // still gated: nothing to wait for in the transport
      }
      ++waiting;
      if (!first) first = &lane;
    }
    return reopened == 0 && waiting > 0;  // waiting == 0 cannot happen (deps point back), but never waits on nothing
  }
  [[nodiscard]] std::span<Lane> lanes() const { return s_.active(); }

 private:
  // whole: run()'s one lane of whole ops (runWhole), which needs no walker.
  void startLanes(bool whole) {
    s_.used = 0;
    auto add = [&](int channel, std::span<const Op> ops, std::size_t base) {
      if (s_.lanes.size() <= s_.used) s_.lanes.emplace_back();
      Lane& lane = s_.lanes[s_.used++];
      lane.channel = channel;
      lane.ops = ops;
      lane.base = base;
      if (!whole) std::construct_at(&lane.walk, ops, o_.sliceElems);  // in place: cheaper than a copy
      lane.whole = whole;
      lane.at = 0;
      lane.finished = lane.gated = lane.blocked = false;
      lane.gatesPassed = -1;
      t_.startLane(lane);
    };
    const std::span<const Op> all(plan_.ranks[static_cast<std::size_t>(rank_)]);
    if (!o_.interleaved) {
      if (plan_.deps.empty()) {  // sequentialOps() is the rank's list as it stands
        add(-1, all, 0);
        return;
      }
      s_.sequential = sequentialOps(plan_, rank_);  // phase by phase
      add(-1, s_.sequential.ops(), 0);
      return;
    }
    if (s_.gatesOf != plan_.deps) {  // compared, not rebuilt, per call: plans repeat
      s_.gatesOf = plan_.deps;
      s_.gates = PhaseGates(plan_.deps);
    }
    s_.laneOf.assign(static_cast<std::size_t>(plan_.nchannels), -1);
    // The rank's ops are channel by channel (plan.h): one lane per non-empty run of a channel.
    for (std::size_t begin = 0; begin < all.size();) {
      std::size_t end = begin + 1;
      while (end < all.size() && all[end].channel == all[begin].channel) ++end;
      s_.laneOf[static_cast<std::size_t>(all[begin].channel)] = static_cast<int>(s_.used);
      add(all[begin].channel, all.subspan(begin, end - begin), begin);
      begin = end;
    }
  }

  // May the lane run its current phase: its deps met (phase_deps.h)? Sets lane.gated.
  bool gateOpen(Lane& lane) {
    if (lane.channel < 0 || s_.gates.empty()) return true;
    const int phase = lane.ops[lane.walk.opIndex()].phase;
    if (phase == lane.gatesPassed) return true;
    const auto walkerOf = [&](int channel) -> const SliceCursor* {
      const int other = s_.laneOf[static_cast<std::size_t>(channel)];
      return other < 0 ? nullptr : &s_.lanes[static_cast<std::size_t>(other)].walk;  // none: no ops on this rank
    };
    lane.gated = !gatesMet(s_.gates, lane.channel, phase, walkerOf);
    if (lane.gated) return false;
    lane.gatesPassed = phase;
    return true;
  }

  // The runner's consumer of one slice (op_dispatch.h): the transport's calls on the lane, the moves.
  struct Slice {
    using Ptr = std::byte*;
    using In = const std::byte*;
    PlanRunner& r;
    Lane& lane;
    std::size_t elems, bytes;
    Ptr at(const Range& x, std::int64_t lo) { return r.t_.address(x, lo); }
    bool writable(Ptr dst) { return r.t_.writable(lane, dst, bytes); }
    bool send(const Op& op, In src) { return r.t_.trySend(lane, op, src, bytes); }
    bool receive(const Op& op, int peer, Ptr into, int index, In& v) {
      v = r.t_.tryReceive(lane, op, peer, into, bytes, index);
      return v != nullptr;
    }
    void release(const Op& op, int peer) { r.t_.release(lane, op, peer); }
    void copy(Ptr dst, In src) { r.m_.copy(dst, src, elems); }
    void reduce(Ptr dst, In a, In b) { r.m_.reduce(dst, a, b, elems); }
    [[nodiscard]] bool overlaps(Ptr dst, In src) const { return dst < src + bytes && src < dst + bytes; }
    static bool same(Ptr dst, In src) { return dst == src; }
    Ptr accumulator(Ptr, In) { return r.m_.scratch(elems); }
  };

  // run() of the one lane of whole ops (the LL paths): the op list is the walk (empty ops have no
  // slice), with no walker to keep up (a measurable part of a tiny call); the transport waits when a
  // step cannot proceed, and at the end until the lane's sends are read.
  void runWhole(Lane& lane) {
    bool moved = false;
    for (lane.at = 0; lane.at < lane.ops.size(); ++lane.at) {
      const Op& op = lane.ops[lane.at];
      if (op.count() <= 0) continue;
      while (!step(lane, op, 0, op.count())) {
        t_.waitForLanes(s_.active(), lane, 1, moved);
        moved = false;
      }
      moved = true;
    }
    while (!t_.drained(lane)) {
      t_.waitForLanes(s_.active(), lane, 1, moved);
      moved = false;
    }
    lane.finished = true;
  }

  // Runs the lane's current slice if nothing it needs is missing; false (the transport's record set)
  // if it must wait.
  bool step(Lane& lane) {
    const auto [lo, hi] = lane.walk.sliceRange();
    return step(lane, lane.ops[lane.walk.opIndex()], lo, hi);
  }
  bool step(Lane& lane, const Op& op, std::int64_t lo, std::int64_t hi) {
    lane.blocked = false;
    const auto elems = static_cast<std::size_t>(hi - lo);
    Slice slice{*this, lane, elems, elems * o_.elemSize};
    return dispatchSlice(slice, op, rank_, plan_.nranks, lo, s_.values);
  }

  Transport& t_;
  State& s_;
  const Plan& plan_;
  int rank_;
  RunnerOptions o_;
  Moves m_;
};

}  // namespace cclab::plan
