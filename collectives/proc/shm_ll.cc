// ShmExecutor's LL path (shm_executor.h): a plan's ops over rings of flagged lines (the format of
// collectives/core/ll_ring.h) in the control segment, one ring per ordered pair of the node's ranks.
//
// Send writes the message into the ring to its peer (waiting only, across calls, for room); Recv,
// RecvReduce and ReduceAll poll the ring from their peer for the message's last word, then copy it out;
// Copy is local. Ops run whole, in the rank's op order (a plan's channels one after the other over the
// one ring per pair: every rank runs them in the same order, so the k-th message on a pair is still
// the one the plan pairs it with). ReduceAll folds every rank's message in rank order, so every rank
// gets the same bits. The reader publishes how far it has read in `acked` after each message; the
// sender reads it only when its cached room says the ring may be full.
//
// Waits are the slot path's (ShmExecutor::waitReady: spin, yield, then a shared futex; bounded, with
// liveness checks and the job's abort word). A reader that sleeps sleeps on the pair's `bell`, a
// sender on its `acked`; whoever makes them ready wakes them: a rank fences, then checks the sleeper
// counts of the words it made ready, before it waits itself and at the end of the call.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "collectives/core/errors.h"
#include "collectives/proc/shm_executor.h"

namespace cclab::proc {
namespace {
// Checks of a line before a wait reads the clock (~30 ns a read here, about a line transfer), where
// waits spin at all.
constexpr int kChecksBeforeClock = 256;
}  // namespace

bool ShmExecutor::llFits(const plan::Plan& plan, std::size_t elemSize) const {
  if (llRingLines_ == 0 || plan.nranks != jobRanks_ || nranks_ != jobRanks_) return false;
  std::map<std::pair<int, int>, std::int64_t> lines;  // (from, to) -> lines one call sends
  for (int r = 0; r < plan.nranks; ++r)
    for (const plan::Op& op : plan.ranks[static_cast<std::size_t>(r)]) {
      if (op.kind != plan::OpKind::Send) continue;
      auto& n = lines[{r, op.peer}];
      n += llLinesFor(static_cast<std::size_t>(op.count()) * elemSize);
      if (n > llRingLines_) return false;
    }
  return true;
}

class ShmExecutor::LlRun {
 public:
  LlRun(ShmExecutor& ex, const plan::Plan& plan, const LocalBuffers& mem, const ShmRunOptions& o, std::uint32_t call)
      : ex_(ex), plan_(plan), mem_(mem), o_(o), call_(call) {}

  void execute() {
    const plan::SequentialOps sequential(plan_, ex_.rank_);  // phase by phase when the plan has deps (plan.h)
    const std::span<const plan::Op> ops = sequential.ops();
    for (opIndex_ = 0; opIndex_ < ops.size(); ++opIndex_) {
      const plan::Op& op = ops[opIndex_];
      if (op.count() <= 0) continue;
      const auto elems = static_cast<std::size_t>(op.count());
      const std::size_t bytes = elems * o_.elemSize;
      const std::byte* src = op.reads() ? address(op.src) : nullptr;
      std::byte* dst = op.writes() ? address(op.dst) : nullptr;
      switch (op.kind) {
        case plan::OpKind::Send: send(op.peer, src, bytes); break;
        case plan::OpKind::Copy:
          if (src != dst) std::memmove(dst, src, bytes);
          break;
        case plan::OpKind::Recv: receive(op.peer, dst, bytes); break;
        case plan::OpKind::RecvReduce: {
          std::byte* in = buffer(incoming_, bytes);
          receive(op.peer, in, bytes);
          o_.reduce(dst, src, in, elems);
          break;
        }
        case plan::OpKind::ReduceAll: reduceAll(src, dst, bytes, elems); break;
      }
    }
    flushWakes();
  }

 private:
  std::byte* address(const plan::Range& r) const {
    const auto off = static_cast<std::size_t>(r.offset) * o_.elemSize;
    switch (r.buf) {
      case plan::Buf::Input: return const_cast<std::byte*>(mem_.input) + off;
      case plan::Buf::Output: return mem_.output + off;
      case plan::Buf::Scratch: return mem_.scratch + off;
    }
    return nullptr;
  }
  static std::byte* buffer(std::vector<std::byte>& v, std::size_t bytes) {
    if (v.size() < bytes) v.resize(bytes);
    return v.data();
  }

  void send(int peer, const std::byte* src, std::size_t bytes) {
    const auto q = static_cast<std::size_t>(peer);
    if (llUnitsFor(bytes) > ex_.llTo_[q].ringUnits())  // could never fit: refuse rather than wait out the timeout
      throw InvalidArgument(ex_.head(site()) + ": an LL message of " + std::to_string(bytes) + " bytes exceeds the ring");
    const std::uint64_t end = ex_.llHead_[q] + llUnitsFor(bytes);
    if (end > ex_.llRoom_[q]) {  // the ring may be full: where is the reader?
      LlWords& w = ex_.llWords(ex_.rank_, peer);
      const auto room = [&] {
        ex_.llRoom_[q] = llTailFromAcked(ex_.llHead_[q], w.acked.value.load(std::memory_order_acquire)) +
                         ex_.llTo_[q].ringUnits();
        return end <= ex_.llRoom_[q];
      };
      if (!room()) wait(w.acked, room, peer, "room in its ring to");
    }
    ex_.llHead_[q] = ex_.llTo_[q].write(ex_.llHead_[q], src, bytes);
    sent_.push_back(peer);
  }

  void receive(int peer, std::byte* dst, std::size_t bytes) {
    if (bytes == 0) return;  // an empty message has no units (and was never sent)
    const auto q = static_cast<std::size_t>(peer);
    const LlRing& ring = ex_.llFrom_[q];
    const std::uint64_t tail = ex_.llTail_[q];
    if (!ring.tryRead(tail, dst, bytes)) {
      LlWords& w = ex_.llWords(peer, ex_.rank_);
      wait(w.bell, [&] { return ring.messageReady(tail, bytes); }, peer, "data from");
      if (!ring.tryRead(tail, dst, bytes)) throw Error(ex_.head(site()) + ": LL message from rank " + std::to_string(peer) + " incomplete");
    }
    ex_.llTail_[q] = tail + llUnitsFor(bytes);
    ex_.llWords(peer, ex_.rank_).acked.value.store(static_cast<std::uint32_t>(ex_.llTail_[q]), std::memory_order_release);
    read_.push_back(peer);
  }

  // dst = v_0 (op) v_1 (op) ... (op) v_{p-1}, folded left in rank order (v_rank = src).
  void reduceAll(const std::byte* src, std::byte* dst, std::size_t bytes, std::size_t elems) {
    std::byte* acc = buffer(acc_, bytes);  // dst may be src: fold aside, write dst last
    std::byte* in = buffer(incoming_, bytes);
    for (int q = 0; q < ex_.nranks_; ++q) {
      const std::byte* v = src;
      if (q != ex_.rank_) {
        receive(q, in, bytes);
        v = in;
      }
      if (q == 0)
        std::memcpy(acc, v, bytes);
      else
        o_.reduce(acc, acc, v, elems);
    }
    std::memcpy(dst, acc, bytes);
  }

  // Wakes the peers asleep on what this rank wrote (data: bell) or read (room: acked). The fence
  // orders this rank's line and acked stores before its reads of the sleeper counts; a sleeper counts
  // itself (a locked add) before its last check (waitUntil), so one of the two sees the other.
  void flushWakes() {
    if (sent_.empty() && read_.empty()) return;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (int peer : sent_) {
      SharedWord& bell = ex_.llWords(ex_.rank_, peer).bell;
      if (bell.sleepers.load(std::memory_order_relaxed) != 0) bell.add(1);
    }
    for (int peer : read_) {
      SharedWord& acked = ex_.llWords(peer, ex_.rank_).acked;
      if (acked.sleepers.load(std::memory_order_relaxed) != 0) acked.wakeAll();
    }
    sent_.clear();
    read_.clear();
  }

  template <class Ready>
  void wait(const SharedWord& word, Ready ready, int peer, const char* what) {
    for (int i = 0; o_.spin.count() > 0 && i < kChecksBeforeClock; ++i) {
      if (ready()) return;
      cpuRelax();
    }
    flushWakes();  // a peer asleep on what this rank sent must not sleep through this wait
    ex_.waitReady(word, [&ready](std::uint32_t) { return ready(); }, peer, what, site(), o_.timeout, o_.spin);
  }

  [[nodiscard]] WaitSite site() const { return {&plan_, opIndex_, call_}; }

  ShmExecutor& ex_;
  const plan::Plan& plan_;
  const LocalBuffers& mem_;
  const ShmRunOptions& o_;
  std::uint32_t call_;
  std::size_t opIndex_ = 0;
  // The executor's, reused by every call (no allocation per call once they have grown).
  std::vector<int>& sent_ = ex_.llSent_;  // peers whose waiters may need a wake-up
  std::vector<int>& read_ = ex_.llRead_;
  std::vector<std::byte>& acc_ = ex_.llAcc_;  // ReduceAll's accumulator
  std::vector<std::byte>& incoming_ = ex_.llIncoming_;  // a received message
};

void ShmExecutor::runLl(const plan::Plan& plan, const LocalBuffers& buffers, const ShmRunOptions& options) {
  // The fit of the whole plan (llFits) is the caller's to check once per plan, not per call.
  if (llRingLines_ == 0 || plan.nranks != jobRanks_ || nranks_ != jobRanks_)
    throw InvalidArgument("proc: no LL path on this node (" + std::to_string(nranks_) + " of " + std::to_string(jobRanks_) + " ranks)");
  if (plan::reduces(plan.collective) && options.reduce == nullptr)
    throw InvalidArgument("proc: a reducing plan needs a reduce function");
  throwIfAborted(plan);
  LlRun(*this, plan, buffers, options, arrive()).execute();
}

}  // namespace cclab::proc
