#include "collectives/host/host_executor.h"

#include <algorithm>
#include <span>
#include <thread>

#include "collectives/core/errors.h"
#include "collectives/plan/plan_runner.h"

namespace cclab::host {
namespace {

// How long a wait stays busy before it sleeps. With a core per rank a peer answers within a few µs
// and a futex round trip costs more than that; with more ranks than cores, spinning only steals the
// peer's core, so a wait yields at once.
constexpr std::chrono::microseconds kSpinWhenOversubscribed{0};

}  // namespace

// A rank's runner state (lanes, gates, the ReduceAll accumulator) and its channels' sent-but-unread
// slices: kept between calls so that a call allocates nothing once shapes repeat.
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
  struct LaneData {
    std::vector<Pending>* pending = nullptr;  // RankState::pending[channel]
    Blocker blocker;
  };
  std::atomic<std::uint32_t> calls{0};  // calls started (after the start delay)
  plan::RunnerState<LaneData> runner;
  std::vector<std::vector<Pending>> pending;  // per channel; cleared, capacity kept
};

HostExecutor::~HostExecutor() = default;

HostExecutor::HostExecutor(int nranks) : ExecutorBase(nranks, false) {
  bells_ = std::make_unique<WaitWord[]>(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) states_.push_back(std::make_unique<RankState>());
  ensureChannels(1);
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

void HostExecutor::publish(WaitWord& word, std::uint32_t seq, int peer) {
  word.store(seq);
  WaitWord& bell = bells_[static_cast<std::size_t>(peer)];
  if (bell.sleepers.load(std::memory_order_seq_cst) != 0) bell.add(1);
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

std::uint32_t HostExecutor::started(int rank) const {
  return states_[static_cast<std::size_t>(rank)]->calls.load(std::memory_order_acquire);
}

void HostExecutor::wakeWaiters() {
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

// The slot transport (plan_runner.h) of one rank during one run(): single-copy slots and the waits.
class HostExecutor::RankRun {
  using Pending = RankState::Pending;

 public:
  using LaneData = RankState::LaneData;
  using Lane = plan::RunnerLane<LaneData>;

  RankRun(HostExecutor& ex, int rank, const plan::Plan& plan, const RankMemory& mem, const RunOptions& o,
          std::uint32_t call)
      : ex_(ex), st_(*ex.states_[static_cast<std::size_t>(rank)]), rank_(rank), plan_(plan), mem_(mem), o_(o), call_(call) {}

  void execute() {
    if (st_.pending.size() < static_cast<std::size_t>(plan_.nchannels)) st_.pending.resize(static_cast<std::size_t>(plan_.nchannels));
    plan::PlanRunner<RankRun>(*this, st_.runner, plan_, rank_, {o_.elemSize, o_.reduce, o_.sliceElems, true}).run();
  }

  std::byte* address(const plan::Range& r, std::int64_t lo) const { return mem_.at(r, lo, o_.elemSize); }

  void startLane(Lane& lane) {
    lane.data.pending = &st_.pending[static_cast<std::size_t>(lane.channel)];
    lane.data.pending->clear();
  }

  bool trySend(Lane& lane, const plan::Op& op, const std::byte* src, std::size_t bytes) {
    Connection& c = ex_.connection(lane.channel, rank_, op.peer);
    const std::uint32_t seq = c.posted.value.load(std::memory_order_relaxed);  // only this rank writes it
    if (!ready(lane, c.consumed, seq - kSlots + 1, op.peer, "a free slot to")) return false;
    c.slots[seq % kSlots] = src;
    ex_.publish(c.posted, seq + 1, op.peer);
    if (lane.data.pending->size() >= 4 * kSlots) prune(lane);
    lane.data.pending->push_back({src, src + bytes, &c, op.peer, seq + 1});
    return true;
  }

  // The sender's own buffer, once the slice is posted (single copy).
  const std::byte* tryReceive(Lane& lane, const plan::Op&, int peer, std::byte*, std::size_t, int) {
    const Connection& c = ex_.connection(lane.channel, peer, rank_);
    const std::uint32_t seq = c.consumed.value.load(std::memory_order_relaxed);  // only this rank writes it
    if (!ready(lane, c.posted, seq + 1, peer, "data from")) return nullptr;
    return c.slots[seq % kSlots];
  }

  void release(Lane& lane, const plan::Op&, int peer) {
    Connection& c = ex_.connection(lane.channel, peer, rank_);
    ex_.publish(c.consumed, c.consumed.value.load(std::memory_order_relaxed) + 1, peer);
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
    if (plan_.deps.empty()) return clear(*lane.data.pending);
    for (const Lane& l : st_.runner.active())
      if (!clear(*l.data.pending)) return false;
    return true;
  }

  // Before returning: every slice this channel sent has been read.
  bool drained(Lane& lane) {
    for (const Pending& p : *lane.data.pending)
      if (!ready(lane, p.connection->consumed, p.seq, p.peer, "its last slices to be read by")) return false;
    lane.data.pending->clear();
    return true;
  }

  // No channel can move: with one blocked, wait on exactly the word it needs; with several, poll all
  // their words (busy, then yielding), then sleep on this rank's doorbell, which a peer bumps after it
  // posted to or consumed from this rank while it sleeps.
  void waitForLanes(std::span<Lane> lanes, Lane& first, int waiting, bool) {
    const auto deadline = Clock::now() + o_.timeout;
    WaitResult r;
    if (waiting == 1) {
      const RankState::Blocker& b = first.data.blocker;
      if (reached(b.word->value.load(std::memory_order_acquire), b.target)) return;
      // waitUntil only reads the word (and sleeps on it); the const_cast is for its signature.
      r = waitUntil(const_cast<WaitWord&>(*b.word), [t = b.target](std::uint32_t v) { return reached(v, t); },
                    ex_.abortFlag(), deadline, ex_.spin_);
    } else {
      auto anyReady = [&](std::uint32_t) {
        for (const Lane& l : lanes)
          if (!l.finished && !l.gated && reached(l.data.blocker.word->value.load(std::memory_order_seq_cst), l.data.blocker.target))
            return true;
        return false;
      };
      r = waitUntil(ex_.bells_[static_cast<std::size_t>(rank_)], anyReady, ex_.abortFlag(), deadline, ex_.spin_);
    }
    if (r != WaitResult::Ready) report(r, first);
  }

 private:
  // False (and the lane's blocker set, the first of a step) when `word` has not reached `target` yet.
  static bool ready(Lane& lane, const WaitWord& word, std::uint32_t target, int peer, const char* what) {
    if (reached(word.value.load(std::memory_order_acquire), target)) return true;
    if (!lane.blocked) lane.data.blocker = {&word, target, peer, what};
    lane.blocked = true;
    return false;
  }

  static void prune(Lane& lane) {
    std::erase_if(*lane.data.pending, [](const Pending& p) {
      return reached(p.connection->consumed.value.load(std::memory_order_acquire), p.seq);
    });
  }

  [[noreturn]] void report(WaitResult r, const Lane& lane) {
    const RankState::Blocker& b = lane.data.blocker;
    ex_.waitFailed(r, plan_, rank_, lane.opIndex(), plan_.nchannels > 1 ? lane.channel : -1, b.what, b.peer, o_.timeout, call_);
  }

  HostExecutor& ex_;
  RankState& st_;
  int rank_;
  const plan::Plan& plan_;
  const RankMemory& mem_;
  const RunOptions& o_;
  std::uint32_t call_;  // this rank's call number (RankState::calls)
};

void HostExecutor::run(int rank, const plan::Plan& plan, const RankMemory& memory, const RunOptions& options) {
  check(rank, plan);
  ensureChannels(plan.nchannels);
  const std::uint32_t call = begin(rank, plan, options, states_[static_cast<std::size_t>(rank)]->calls);
  arrivals_.record(rank, call, Clock::now());  // ready to communicate
  RankRun(*this, rank, plan, memory, options, call).execute();
}

}  // namespace cclab::host
