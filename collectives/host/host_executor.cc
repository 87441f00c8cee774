#include "collectives/host/host_executor.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <thread>

#include "collectives/core/errors.h"
#include "collectives/plan/interpret.h"
#include "collectives/plan/phase_deps.h"

namespace cclab::host {
namespace {

// How long a wait stays busy before it sleeps. With a core per rank a peer answers within a few µs
// and a futex round trip costs more than that; with more ranks than cores, spinning only steals the
// peer's core, so a wait yields at once.
constexpr std::chrono::microseconds kSpinWhenOversubscribed{0};

bool reached(std::uint32_t value, std::uint32_t target) { return static_cast<std::int32_t>(value - target) >= 0; }

std::string where(const plan::Plan& plan) {
  return "host " + std::string(plan::name(plan.collective)) + "/" + std::string(plan::name(plan.algorithm));
}

}  // namespace

// A rank's lanes (one per channel of the current plan), their sent-but-unread slices and the ReduceAll
// accumulator: kept between calls so that a call allocates nothing once shapes repeat.
struct alignas(64) HostExecutor::RankState {  // own cache lines: written by its rank every call
  struct Pending {  // a sent slice the receiver may still be reading
    const std::byte* begin;
    const std::byte* end;
    Connection* connection;
    int peer;
    std::uint32_t seq;  // consumed must reach this
  };
  struct Blocker {  // what a lane's current step waits for: word reaching target
    const WaitWord* word = nullptr;
    std::uint32_t target = 0;
    int peer = -1;
    const char* what = "";
  };
  struct Lane {
    int channel;
    std::span<const plan::Op> ops;
    std::size_t base;  // index of ops[0] in the rank's op list
    plan::SliceCursor walk;
    std::vector<Pending>* pending;  // RankState::pending[channel]
    Blocker blocker;
    bool finished = false;
    bool gated = false;    // waits at its phase's first slice for a dep (no blocker word)
    int gatesPassed = -1;  // the last phase whose deps were met
  };

  std::vector<Lane> lanes;
  std::vector<int> laneOf;                    // per channel: its index in lanes (-1: no ops here)
  std::vector<std::vector<Pending>> pending;  // per channel; cleared, capacity kept
  std::vector<std::byte> temp;
  std::vector<plan::PhaseDep> gatesOf;  // the deps `gates` was made from (rebuilt when a plan's differ)
  plan::PhaseGates gates;
};

HostExecutor::~HostExecutor() = default;

HostExecutor::HostExecutor(int nranks) : nranks_(nranks), arrivals_(std::max(nranks, 1)) {
  if (nranks < 1) throw InvalidArgument("HostExecutor: nranks must be >= 1");
  bells_ = std::make_unique<WaitWord[]>(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) states_.push_back(std::make_unique<RankState>());
  ensureChannels(1);
  arrived_ = std::make_unique<std::atomic<std::uint32_t>[]>(static_cast<std::size_t>(nranks));
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  spin_ = spinFromEnvironment(static_cast<unsigned>(nranks) <= cores ? kSpinWhenCoresSuffice : kSpinWhenOversubscribed);
}

void HostExecutor::ensureChannels(int channels) {
  if (channels < 1 || channels > plan::kMaxChannels)
    throw InvalidArgument("host: a plan of " + std::to_string(channels) + " channels (1.." +
                          std::to_string(plan::kMaxChannels) + ")");
  if (lanes_[static_cast<std::size_t>(channels - 1)].load(std::memory_order_acquire)) return;  // made in order
  std::lock_guard lock(lanesMutex_);
  const auto pairs = static_cast<std::size_t>(nranks_) * static_cast<std::size_t>(nranks_);
  for (int c = 0; c < channels; ++c) {
    auto& lane = lanes_[static_cast<std::size_t>(c)];
    if (lane.load(std::memory_order_relaxed)) continue;
    owned_.push_back(std::make_unique<Connection[]>(pairs));
    lane.store(owned_.back().get(), std::memory_order_release);
  }
}

void HostExecutor::ring(int rank) {
  WaitWord& bell = bells_[static_cast<std::size_t>(rank)];
  if (bell.sleepers.load(std::memory_order_seq_cst) != 0) bell.add(1);
}

void HostExecutor::post(Connection& c, std::uint32_t seq, int to) {
  c.posted.store(seq);
  ring(to);
}

void HostExecutor::consume(Connection& c, std::uint32_t seq, int from) {
  c.consumed.store(seq);
  ring(from);
}

std::uint64_t HostExecutor::progress() const {
  std::uint64_t sum = 0;
  const auto pairs = static_cast<std::size_t>(nranks_) * static_cast<std::size_t>(nranks_);
  for (const auto& lane : lanes_) {
    const Connection* c = lane.load(std::memory_order_acquire);
    if (!c) break;
    for (std::size_t i = 0; i < pairs; ++i)
      sum += c[i].posted.value.load(std::memory_order_relaxed) + std::uint64_t{c[i].consumed.value.load(std::memory_order_relaxed)};
  }
  return sum;
}

void HostExecutor::resetArrivals() {
  std::uint32_t next = 0;  // the highest call number any rank has started
  for (int r = 0; r < nranks_; ++r) {
    const std::uint32_t started = arrived_[static_cast<std::size_t>(r)].load(std::memory_order_acquire);
    if (r == 0 || reached(started, next)) next = started;
  }
  arrivals_.reset(next + 1);
}

std::string HostExecutor::lateRanks(std::uint32_t call) const {
  std::vector<int> late;
  for (int r = 0; r < nranks_; ++r)
    if (!reached(arrived_[static_cast<std::size_t>(r)].load(std::memory_order_acquire), call)) late.push_back(r);
  return neverArrived(late);
}

void HostExecutor::fail(const std::string& why) {
  abort_.raise(why);
  const auto pairs = static_cast<std::size_t>(nranks_) * static_cast<std::size_t>(nranks_);
  for (const auto& lane : lanes_) {
    Connection* c = lane.load(std::memory_order_acquire);
    if (!c) break;
    for (std::size_t i = 0; i < pairs; ++i) {
      c[i].posted.wakeAll();
      c[i].consumed.wakeAll();
    }
  }
  for (int r = 0; r < nranks_; ++r) bells_[static_cast<std::size_t>(r)].wakeAll();
}

// The state of one rank during one run(): its lanes (RankState) and the waits.
class HostExecutor::RankRun {
  using Pending = RankState::Pending;
  using Blocker = RankState::Blocker;
  using Lane = RankState::Lane;

 public:
  RankRun(HostExecutor& ex, int rank, const plan::Plan& plan, const RankMemory& mem, const RunOptions& o,
          std::uint32_t call)
      : ex_(ex), rank_(rank), plan_(plan), mem_(mem), o_(o), call_(call) {}

  void execute() {
    RankState& state = *ex_.states_[static_cast<std::size_t>(rank_)];
    std::vector<Lane>& lanes = state.lanes;
    lanes.clear();
    if (state.pending.size() < static_cast<std::size_t>(plan_.nchannels)) state.pending.resize(static_cast<std::size_t>(plan_.nchannels));
    state.laneOf.assign(static_cast<std::size_t>(plan_.nchannels), -1);
    if (state.gatesOf != plan_.deps) {  // compared, not rebuilt, per call: plans repeat
      state.gatesOf = plan_.deps;
      state.gates = plan::PhaseGates(plan_.deps);
    }
    gates_ = &state.gates;
    // The rank's ops are channel by channel (plan.h): one lane per non-empty run of a channel.
    const std::span<const plan::Op> all(plan_.ranks[static_cast<std::size_t>(rank_)]);
    for (std::size_t begin = 0; begin < all.size();) {
      std::size_t end = begin + 1;
      while (end < all.size() && all[end].channel == all[begin].channel) ++end;
      const auto ops = all.subspan(begin, end - begin);
      auto& pending = state.pending[all[begin].channel];
      pending.clear();
      state.laneOf[all[begin].channel] = static_cast<int>(lanes.size());
      lanes.push_back(Lane{all[begin].channel, ops, begin, plan::SliceCursor(ops, o_.sliceElems), &pending, {}});
      begin = end;
    }
    // Round robin: each channel runs as far as it can; a rank waits only when none can move. After a
    // pass every running channel is blocked on the word in its blocker (set in this pass), or gated:
    // at a phase whose deps (plan.h) another lane of this thread has not met yet. A gate opens only
    // when that lane moves, never from another thread, so a gated lane is no wait's business: if its
    // gate opened during the pass (the lane it waits for ran after it), the next pass runs it at once;
    // else the rank waits for the lanes that are blocked on words (the first wait check is immediate).
    for (;;) {
      Lane* blocked = nullptr;  // the first channel blocked on a word
      int waiting = 0, reopened = 0;
      bool running = false;
      for (Lane& lane : lanes) {
        if (lane.finished) continue;
        while (!lane.walk.done() && gateOpen(lane) && step(lane)) lane.walk.advance();
        if (lane.walk.done() && drained(lane)) {
          lane.finished = true;
          continue;
        }
        running = true;
      }
      if (!running) return;
      for (Lane& lane : lanes) {
        if (lane.finished) continue;
        if (lane.gated) {
          reopened += gateOpen(lane) ? 1 : 0;
          if (lane.gated) continue;  // still gated: no word to wait on
        }
        ++waiting;
        if (!blocked) blocked = &lane;
      }
      if (reopened > 0 || waiting == 0) continue;  // waiting == 0 cannot happen (deps point back), but never waits on nothing
      if (waiting == 1)
        waitFor(*blocked);  // one channel (the common case): a wait on exactly its word
      else
        waitAny(lanes);
    }
  }

 private:
  std::byte* address(const plan::Range& r, std::int64_t lo) const { return mem_.at(r, lo, o_.elemSize); }

  // May the lane run its current phase: its deps met (phase_deps.h)? Sets lane.gated.
  bool gateOpen(Lane& lane) {
    const int phase = lane.ops[lane.walk.opIndex()].phase;
    if (phase == lane.gatesPassed) return true;
    const RankState& state = *ex_.states_[static_cast<std::size_t>(rank_)];
    const auto walkerOf = [&](int channel) -> const plan::SliceCursor* {
      const int other = state.laneOf[static_cast<std::size_t>(channel)];
      return other < 0 ? nullptr : &state.lanes[static_cast<std::size_t>(other)].walk;  // none: no ops on this rank
    };
    lane.gated = !plan::gatesMet(*gates_, lane.channel, phase, walkerOf);
    if (lane.gated) return false;
    lane.gatesPassed = phase;
    return true;
  }

  // False (and lane.blocker set) when `word` has not reached `target` yet.
  static bool ready(Lane& lane, const WaitWord& word, std::uint32_t target, int peer, const char* what) {
    if (reached(word.value.load(std::memory_order_acquire), target)) return true;
    lane.blocker = {&word, target, peer, what};
    return false;
  }

  // Runs the lane's current slice if nothing it needs is missing; false (blocker set) if it must wait.
  bool step(Lane& lane) {
    const plan::Op& op = lane.ops[lane.walk.opIndex()];
    const auto [lo, hi] = lane.walk.sliceRange();
    const auto elems = static_cast<std::size_t>(hi - lo);
    const std::size_t bytes = elems * o_.elemSize;
    const std::byte* src = op.reads() ? address(op.src, lo) : nullptr;
    std::byte* dst = op.writes() ? address(op.dst, lo) : nullptr;
    if (dst && !writable(lane, dst, bytes)) return false;
    switch (op.kind) {
      case plan::OpKind::Send: return send(lane, op.peer, src, bytes);
      case plan::OpKind::Copy:
        if (src != dst) std::memmove(dst, src, bytes);
        return true;
      case plan::OpKind::Recv:
      case plan::OpKind::RecvReduce: return receive(lane, op, src, dst, bytes, elems);
      case plan::OpKind::ReduceAll: return reduceAll(lane, src, dst, bytes, elems);
    }
    return true;
  }

  bool send(Lane& lane, int peer, const std::byte* src, std::size_t bytes) {
    Connection& c = ex_.connection(lane.channel, rank_, peer);
    const std::uint32_t seq = c.posted.value.load(std::memory_order_relaxed);  // only this rank writes it
    if (!ready(lane, c.consumed, seq - kSlots + 1, peer, "a free slot to")) return false;
    c.slots[seq % kSlots] = src;
    ex_.post(c, seq + 1, peer);
    if (lane.pending->size() >= 4 * kSlots) prune(lane);
    lane.pending->push_back({src, src + bytes, &c, peer, seq + 1});
    return true;
  }

  bool receive(Lane& lane, const plan::Op& op, const std::byte* src, std::byte* dst, std::size_t bytes,
               std::size_t elems) {
    Connection& c = ex_.connection(lane.channel, op.peer, rank_);
    const std::uint32_t seq = c.consumed.value.load(std::memory_order_relaxed);  // only this rank writes it
    if (!ready(lane, c.posted, seq + 1, op.peer, "data from")) return false;
    const std::byte* remote = c.slots[seq % kSlots];
    if (op.kind == plan::OpKind::Recv)
      std::memcpy(dst, remote, bytes);
    else
      o_.reduce(dst, src, remote, elems);
    ex_.consume(c, seq + 1, op.peer);
    return true;
  }

  // dst = v_0 (op) v_1 (op) ... (op) v_{p-1}, left to right, v_q = rank q's slot (v_rank = src).
  bool reduceAll(Lane& lane, const std::byte* src, std::byte* dst, std::size_t bytes, std::size_t elems) {
    const int p = ex_.nranks_;
    for (int q = 0; q < p; ++q) {  // every peer's slice must be there before any is read
      if (q == rank_) continue;
      Connection& c = ex_.connection(lane.channel, q, rank_);
      if (!ready(lane, c.posted, c.consumed.value.load(std::memory_order_relaxed) + 1, q, "data from")) return false;
    }
    auto value = [&](int q) -> const std::byte* {
      if (q == rank_) return src;
      Connection& c = ex_.connection(lane.channel, q, rank_);
      return c.slots[c.consumed.value.load(std::memory_order_relaxed) % kSlots];
    };
    if (p == 1) {
      if (src != dst) std::memmove(dst, src, bytes);
      return true;
    }
    // The accumulator may be dst itself unless dst is this rank's src and src is still to be read
    // (after rank 0's step); then a private buffer, copied to dst at the end.
    const bool overlap = dst < src + bytes && src < dst + bytes;
    std::byte* acc = dst;
    if (overlap && !(rank_ == 0 && src == dst)) {
      auto& temp = ex_.states_[static_cast<std::size_t>(rank_)]->temp;  // only this rank's thread touches it
      if (temp.size() < bytes) temp.resize(bytes);
      acc = temp.data();
    }
    o_.reduce(acc, value(0), value(1), elems);
    for (int q = 2; q < p; ++q) o_.reduce(acc, acc, value(q), elems);
    if (acc != dst) std::memcpy(dst, acc, bytes);
    for (int q = 0; q < p; ++q) {
      if (q == rank_) continue;
      Connection& c = ex_.connection(lane.channel, q, rank_);
      ex_.consume(c, c.consumed.value.load(std::memory_order_relaxed) + 1, q);
    }
    return true;
  }

  // Before writing [dst, dst+bytes): every slice sent from there must have been read. Channels
  // without deps never touch each other's elements, so only this channel's sends matter; with deps a
  // later phase may overwrite what another channel sent (the dep ordered the send, not its read).
  bool writable(Lane& lane, const std::byte* dst, std::size_t bytes) {
    const std::byte* end = dst + bytes;
    auto clear = [&](const std::vector<Pending>& pending) {
      for (const Pending& p : pending)
        if (p.begin < end && dst < p.end && !ready(lane, p.connection->consumed, p.seq, p.peer, "its read of a slice by"))
          return false;
      return true;
    };
    if (plan_.deps.empty()) return clear(*lane.pending);
    for (const Lane& l : ex_.states_[static_cast<std::size_t>(rank_)]->lanes)
      if (!clear(*l.pending)) return false;
    return true;
  }

  // Before returning: every slice this channel sent has been read.
  bool drained(Lane& lane) {
    for (const Pending& p : *lane.pending)
      if (!ready(lane, p.connection->consumed, p.seq, p.peer, "its last slices to be read by")) return false;
    lane.pending->clear();
    return true;
  }

  static void prune(Lane& lane) {
    std::erase_if(*lane.pending, [](const Pending& p) {
      return reached(p.connection->consumed.value.load(std::memory_order_acquire), p.seq);
    });
  }

  // One channel left: wait on exactly the word it needs.
  void waitFor(const Lane& lane) {
    const Blocker& b = lane.blocker;
    if (reached(b.word->value.load(std::memory_order_acquire), b.target)) return;
    const auto deadline = Clock::now() + o_.timeout;
    // waitUntil only reads the word (and sleeps on it); the const_cast is for its signature.
    const auto r = waitUntil(const_cast<WaitWord&>(*b.word), [t = b.target](std::uint32_t v) { return reached(v, t); },
                             ex_.abort_.flag(), deadline, ex_.spin_);
    if (r != WaitResult::Ready) report(r, lane);
  }

  // Several channels blocked: poll all their words (busy, then yielding), then sleep on this rank's
  // doorbell, which a peer bumps after it posted to or consumed from this rank while it sleeps.
  void waitAny(std::vector<Lane>& lanes) {
    auto anyReady = [&](std::uint32_t) {
      for (const Lane& l : lanes)
        if (!l.finished && !l.gated && reached(l.blocker.word->value.load(std::memory_order_seq_cst), l.blocker.target))
          return true;
      return false;
    };
    WaitWord& bell = ex_.bells_[static_cast<std::size_t>(rank_)];
    const auto r = waitUntil(bell, anyReady, ex_.abort_.flag(), Clock::now() + o_.timeout, ex_.spin_);
    if (r == WaitResult::Ready) return;
    const Lane* first = nullptr;
    for (const Lane& l : lanes)
      if (!l.finished && !l.gated && !first) first = &l;
    report(r, *first);
  }

  [[noreturn]] void report(WaitResult r, const Lane& lane) {
    const Blocker& b = lane.blocker;
    const std::size_t index = lane.base + (lane.walk.done() ? lane.ops.size() : lane.walk.opIndex());
    const std::string op = " at op " + std::to_string(index) +
                           (plan_.nchannels > 1 ? " (channel " + std::to_string(lane.channel) + ")" : std::string());
    const std::string waitingFor = std::string(b.what) + " rank " + std::to_string(b.peer);
    if (r == WaitResult::TimedOut) {
      // Name the cause first: a rank that never started this call, not only the neighbour waited for.
      const std::string late = ex_.lateRanks(call_);
      const std::string msg = where(plan_) + ": " + (late.empty() ? "" : late + "; ") + "rank " + std::to_string(rank_) +
                              " timed out after " + milliseconds(o_.timeout) + op + " waiting for " + waitingFor;
      ex_.fail(msg);
      throw TimeoutError(msg);
    }
    throw TimeoutError(where(plan_) + ": rank " + std::to_string(rank_) + " aborted" + op + " while waiting for " +
                       waitingFor + " (" + ex_.abort_.reason() + ")");
  }

  HostExecutor& ex_;
  int rank_;
  const plan::Plan& plan_;
  const RankMemory& mem_;
  const RunOptions& o_;
  std::uint32_t call_;  // this rank's call number (HostExecutor::arrived_)
  const plan::PhaseGates* gates_ = nullptr;  // RankState::gates of this plan
};

void HostExecutor::run(int rank, const plan::Plan& plan, const RankMemory& memory, const RunOptions& options) {
  if (rank < 0 || rank >= nranks_) throw InvalidArgument("host: rank " + std::to_string(rank) + " out of range");
  if (plan.nranks != nranks_) throw InvalidArgument("host: plan for " + std::to_string(plan.nranks) + " ranks");
  if (broken()) throw Error("host: communicator unusable after an earlier failure (" + abort_.reason() + ")");
  ensureChannels(plan.nchannels);
  if (options.startDelay.count() > 0)
    abort_.delayStart(where(plan) + ": rank " + std::to_string(rank), options.startDelay, options.timeout,
                      [this](const std::string& why) { fail(why); });
  const auto arrival = Clock::now();  // ready to communicate
  const std::uint32_t call = arrived_[static_cast<std::size_t>(rank)].fetch_add(1, std::memory_order_acq_rel) + 1;
  arrivals_.record(rank, call, arrival);
  RankRun(*this, rank, plan, memory, options, call).execute();
}

}  // namespace cclab::host
