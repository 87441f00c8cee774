#include "collectives/host/host_executor.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "collectives/core/errors.h"
#include "collectives/plan/interpret.h"

namespace cclab::host {
namespace {

// How long a wait stays busy before it sleeps. With a core per rank a peer answers within a few µs
// and a futex round trip costs more than that; with more ranks than cores, spinning only steals the
// peer's core, so a wait yields at once.
constexpr std::chrono::microseconds kSpinWhenCoresSuffice{50};
constexpr std::chrono::microseconds kSpinWhenOversubscribed{0};

bool reached(std::uint32_t value, std::uint32_t target) { return static_cast<std::int32_t>(value - target) >= 0; }

std::string where(const plan::Plan& plan) {
  return "host " + std::string(plan::name(plan.collective)) + "/" + std::string(plan::name(plan.algorithm));
}

std::string milliseconds(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

}  // namespace

HostExecutor::HostExecutor(int nranks) : nranks_(nranks), arrivals_(std::max(nranks, 1)) {
  if (nranks < 1) throw InvalidArgument("HostExecutor: nranks must be >= 1");
  channels_.resize(static_cast<std::size_t>(nranks) * static_cast<std::size_t>(nranks));
  for (auto& c : channels_) c = std::make_unique<Channel>();
  arrived_ = std::make_unique<std::atomic<std::uint32_t>[]>(static_cast<std::size_t>(nranks));
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  spin_ = spinFromEnvironment(static_cast<unsigned>(nranks) <= cores ? kSpinWhenCoresSuffice : kSpinWhenOversubscribed);
}

std::uint64_t HostExecutor::progress() const {
  std::uint64_t sum = 0;
  for (const auto& c : channels_)
    sum += c->posted.value.load(std::memory_order_relaxed) + std::uint64_t{c->consumed.value.load(std::memory_order_relaxed)};
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

std::string HostExecutor::reason() {
  std::lock_guard lock(reasonMutex_);
  return reason_;
}

std::string HostExecutor::lateRanks(std::uint32_t call) const {
  constexpr int kMaxNamed = 8;  // a message stays one readable line
  std::vector<int> late;
  for (int r = 0; r < nranks_; ++r)
    if (!reached(arrived_[static_cast<std::size_t>(r)].load(std::memory_order_acquire), call)) late.push_back(r);
  if (late.empty()) return "";
  std::string text = late.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < late.size() && i < kMaxNamed; ++i) text += (i ? ", " : "") + std::to_string(late[i]);
  if (late.size() > kMaxNamed) text += " and " + std::to_string(late.size() - kMaxNamed) + " more";
  return text + " never arrived";
}

bool HostExecutor::pauseUntil(Clock::time_point until) {
  constexpr auto kSpinTail = std::chrono::microseconds(200);  // sleep the bulk, spin the end
  constexpr auto kMaxSleep = std::chrono::milliseconds(20);   // re-check even if a wake-up were lost
  for (;;) {
    if (aborted_.load(std::memory_order_acquire)) return false;
    const auto now = Clock::now();
    if (now >= until) return true;
    if (until - now > kSpinTail)
      sleepWhileEqual(abortWord_, 0, std::min<std::chrono::nanoseconds>(until - now - kSpinTail, kMaxSleep));
    else
      cpuRelax();
  }
}

void HostExecutor::delayStart(int rank, const plan::Plan& plan, const RunOptions& o) {
  const auto start = Clock::now();
  const auto delayEnd = start + o.startDelay;
  const auto deadline = start + o.timeout;
  const std::string who = where(plan) + ": rank " + std::to_string(rank);
  if (!pauseUntil(std::min(delayEnd, deadline)))
    throw TimeoutError(who + " aborted during its start delay (" + reason() + ")");
  if (delayEnd > deadline) {
    const std::string msg = who + " timed out after " + milliseconds(o.timeout) + " in its start delay of " +
                            milliseconds(o.startDelay) + " (straggler)";
    fail(msg);
    throw TimeoutError(msg);
  }
}

void HostExecutor::fail(const std::string& why) {
  {
    std::lock_guard lock(reasonMutex_);
    if (reason_.empty()) reason_ = why;
  }
  aborted_.store(true, std::memory_order_release);
  abortWord_.value.store(1, std::memory_order_seq_cst);
  abortWord_.wakeAll();
  for (auto& c : channels_) {
    c->posted.wakeAll();
    c->consumed.wakeAll();
  }
}

// The state of one rank during one run(): its outstanding sends and its waits.
class HostExecutor::RankRun {
 public:
  RankRun(HostExecutor& ex, int rank, const plan::Plan& plan, const RankMemory& mem, const RunOptions& o,
          std::uint32_t call)
      : ex_(ex), rank_(rank), plan_(plan), mem_(mem), o_(o), call_(call) {}

  void execute() {
    const auto& ops = plan_.ranks[static_cast<std::size_t>(rank_)];
    for (plan::SliceCursor cur(ops, o_.sliceElems); !cur.done(); cur.advance()) {
      opIndex_ = cur.opIndex();
      const plan::Op& op = ops[opIndex_];
      const auto [lo, hi] = cur.sliceRange();
      const std::size_t bytes = static_cast<std::size_t>(hi - lo) * o_.elemSize;
      const std::byte* src = op.reads() ? address(op.src, lo) : nullptr;
      std::byte* dst = op.writes() ? address(op.dst, lo) : nullptr;
      switch (op.kind) {
        case plan::OpKind::Send: send(op.peer, src, bytes); break;
        case plan::OpKind::Copy:
          waitWritable(dst, bytes);
          if (src != dst) std::memmove(dst, src, bytes);
          break;
        case plan::OpKind::Recv:
        case plan::OpKind::RecvReduce: receive(op, src, dst, bytes, static_cast<std::size_t>(hi - lo)); break;
        case plan::OpKind::ReduceAll: throw InvalidArgument(where(plan_) + ": this executor cannot run ReduceAll yet");
      }
    }
    for (const Pending& p : pending_) waitFor(p.channel->consumed, p.seq, peerOf(p.channel), "its last slices to be read by");
    pending_.clear();
  }

 private:
  std::byte* address(const plan::Range& r, std::int64_t lo) const {
    const auto off = static_cast<std::size_t>(r.offset + lo) * o_.elemSize;
    switch (r.buf) {
      case plan::Buf::Input: return const_cast<std::byte*>(mem_.input) + off;  // only read through
      case plan::Buf::Output: return mem_.output + off;
      case plan::Buf::Scratch: return mem_.scratch + off;
    }
    return nullptr;
  }

  void send(int peer, const std::byte* src, std::size_t bytes) {
    Channel& ch = ex_.channel(rank_, peer);
    const std::uint32_t seq = ch.posted.value.load(std::memory_order_relaxed);  // only this rank writes it
    waitFor(ch.consumed, seq - kSlots + 1, peer, "a free slot to");
    ch.slots[seq % kSlots] = src;
    ch.posted.store(seq + 1);
    if (pending_.size() >= 4 * kSlots) prune();
    pending_.push_back({src, src + bytes, &ch, seq + 1});
  }

  void receive(const plan::Op& op, const std::byte* src, std::byte* dst, std::size_t bytes, std::size_t elems) {
    Channel& ch = ex_.channel(op.peer, rank_);
    const std::uint32_t seq = ch.consumed.value.load(std::memory_order_relaxed);  // only this rank writes it
    waitWritable(dst, bytes);
    waitFor(ch.posted, seq + 1, op.peer, "data from");
    const std::byte* remote = ch.slots[seq % kSlots];
    if (op.kind == plan::OpKind::Recv)
      std::memcpy(dst, remote, bytes);
    else
      o_.reduce(dst, src, remote, elems);
    ch.consumed.store(seq + 1);
  }

  // Before writing [dst, dst+bytes): every slice this rank sent from there must have been read.
  void waitWritable(const std::byte* dst, std::size_t bytes) {
    const std::byte* end = dst + bytes;
    for (const Pending& p : pending_)
      if (p.begin < end && dst < p.end) waitFor(p.channel->consumed, p.seq, peerOf(p.channel), "its read of a slice by");
  }

  int peerOf(const Channel* ch) const {
    for (int to = 0; to < ex_.nranks_; ++to)
      if (&ex_.channel(rank_, to) == ch) return to;
    return -1;
  }

  void prune() {
    std::erase_if(pending_, [](const Pending& p) {
      return reached(p.channel->consumed.value.load(std::memory_order_acquire), p.seq);
    });
  }

  void waitFor(WaitWord& word, std::uint32_t target, int peer, const char* what) {
    if (reached(word.value.load(std::memory_order_acquire), target)) return;
    const auto deadline = Clock::now() + o_.timeout;
    const auto r = waitUntil(word, [target](std::uint32_t v) { return reached(v, target); }, ex_.aborted_, deadline,
                             ex_.spin_);
    if (r == WaitResult::Ready) return;
    const std::string op = " at op " + std::to_string(opIndex_);
    const std::string waitingFor = std::string(what) + " rank " + std::to_string(peer);
    if (r == WaitResult::TimedOut) {
      // Name the cause first: a rank that never started this call, not only the neighbour waited for.
      const std::string late = ex_.lateRanks(call_);
      const std::string msg = where(plan_) + ": " + (late.empty() ? "" : late + "; ") + "rank " + std::to_string(rank_) +
                              " timed out after " + milliseconds(o_.timeout) + op + " waiting for " + waitingFor;
      ex_.fail(msg);
      throw TimeoutError(msg);
    }
    throw TimeoutError(where(plan_) + ": rank " + std::to_string(rank_) + " aborted" + op + " while waiting for " +
                       waitingFor + " (" + ex_.reason() + ")");
  }

  HostExecutor& ex_;
  int rank_;
  const plan::Plan& plan_;
  const RankMemory& mem_;
  const RunOptions& o_;
  std::uint32_t call_;  // this rank's call number (HostExecutor::arrived_)
  std::vector<Pending> pending_;
  std::size_t opIndex_ = 0;
};

void HostExecutor::run(int rank, const plan::Plan& plan, const RankMemory& memory, const RunOptions& options) {
  if (rank < 0 || rank >= nranks_) throw InvalidArgument("host: rank " + std::to_string(rank) + " out of range");
  if (plan.nranks != nranks_) throw InvalidArgument("host: plan for " + std::to_string(plan.nranks) + " ranks");
  if (broken()) throw Error("host: communicator unusable after an earlier failure (" + reason() + ")");
  if (options.startDelay.count() > 0) delayStart(rank, plan, options);
  const auto arrival = Clock::now();  // ready to communicate
  const std::uint32_t call = arrived_[static_cast<std::size_t>(rank)].fetch_add(1, std::memory_order_acq_rel) + 1;
  arrivals_.record(rank, call, arrival);
  RankRun(*this, rank, plan, memory, options, call).execute();
}

}  // namespace cclab::host
