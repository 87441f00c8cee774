#include "collectives/host/host_executor.h"

#include <algorithm>
#include <cstdlib>
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

void delayStart(std::chrono::nanoseconds d) {
  if (d.count() <= 0) return;
  const auto until = Clock::now() + d;
  constexpr auto kSpinTail = std::chrono::microseconds(200);  // sleep the bulk, spin the end
  if (d > kSpinTail) std::this_thread::sleep_for(d - kSpinTail);
  while (Clock::now() < until) cpuRelax();
}

}  // namespace

HostExecutor::HostExecutor(int nranks) : nranks_(nranks) {
  if (nranks < 1) throw InvalidArgument("HostExecutor: nranks must be >= 1");
  channels_.resize(static_cast<std::size_t>(nranks) * static_cast<std::size_t>(nranks));
  for (auto& c : channels_) c = std::make_unique<Channel>();
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  spin_ = static_cast<unsigned>(nranks) <= cores ? kSpinWhenCoresSuffice : kSpinWhenOversubscribed;
  if (const char* e = std::getenv("CCLAB_SPIN_US")) spin_ = std::chrono::microseconds(std::atoi(e));
}

void HostExecutor::fail(const std::string& why) {
  {
    std::lock_guard lock(reasonMutex_);
    if (reason_.empty()) reason_ = why;
  }
  aborted_.store(true, std::memory_order_release);
  for (auto& c : channels_) {
    c->posted.wakeAll();
    c->consumed.wakeAll();
  }
}

// The state of one rank during one run(): its outstanding sends and its waits.
class HostExecutor::RankRun {
 public:
  RankRun(HostExecutor& ex, int rank, const plan::Plan& plan, const RankMemory& mem, const RunOptions& o)
      : ex_(ex), rank_(rank), plan_(plan), mem_(mem), o_(o) {}

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
    const std::string who = "rank " + std::to_string(peer);
    const std::string where = std::string(plan::name(plan_.collective)) + "/" + std::string(plan::name(plan_.algorithm)) +
                              " op " + std::to_string(opIndex_);
    if (r == WaitResult::TimedOut) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(o_.timeout).count();
      const std::string msg = "host " + where + ": rank " + std::to_string(rank_) + " timed out after " +
                              std::to_string(ms) + " ms waiting for " + what + " " + who;
      ex_.fail(msg);
      throw TimeoutError(msg);
    }
    std::string reason;
    {
      std::lock_guard lock(ex_.reasonMutex_);
      reason = ex_.reason_;
    }
    throw TimeoutError("host " + where + ": rank " + std::to_string(rank_) + " aborted while waiting for " + what + " " +
                       who + " (" + reason + ")");
  }

  HostExecutor& ex_;
  int rank_;
  const plan::Plan& plan_;
  const RankMemory& mem_;
  const RunOptions& o_;
  std::vector<Pending> pending_;
  std::size_t opIndex_ = 0;
};

void HostExecutor::run(int rank, const plan::Plan& plan, const RankMemory& memory, const RunOptions& options) {
  if (rank < 0 || rank >= nranks_) throw InvalidArgument("host: rank " + std::to_string(rank) + " out of range");
  if (plan.nranks != nranks_) throw InvalidArgument("host: plan for " + std::to_string(plan.nranks) + " ranks");
  if (broken()) {
    std::lock_guard lock(reasonMutex_);
    throw Error("host: communicator unusable after an earlier failure (" + reason_ + ")");
  }
  delayStart(options.startDelay);
  RankRun(*this, rank, plan, memory, options).execute();
}

}  // namespace cclab::host
