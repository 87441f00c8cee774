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

class ShmExecutor::LlRun : public plan::WaitingTransport {
 public:
  LlRun(ShmExecutor& ex, const plan::Plan& plan, const LocalBuffers& mem, const ShmRunOptions& o, std::uint32_t call)
      : ex_(ex), plan_(plan), mem_(mem), o_(o), call_(call) {}

  // The ops in the rank's op order (whole ops, plan_runner.h), this class the transport.
  void execute() {
    plan::PlanRunner<LlRun>(*this, ex_.llRunner_, plan_, ex_.rank_, {o_.elemSize, o_.reduce, 0, false}).run();
    flushWakes();
  }

  // The LL transport (plan::WaitingTransport: every call waits itself, bounded, until it can proceed).
  std::byte* address(const plan::Range& r, std::int64_t lo) const {
    const auto off = static_cast<std::size_t>(r.offset + lo) * o_.elemSize;
    switch (r.buf) {
      case plan::Buf::Input: return const_cast<std::byte*>(mem_.input) + off;
      case plan::Buf::Output: return mem_.output + off;
      case plan::Buf::Scratch: return mem_.scratch + off;
    }
    return nullptr;
  }
  bool trySend(Lane& lane, const plan::Op& op, const std::byte* src, std::size_t bytes) {
    opIndex_ = lane.opIndex();
    send(op.peer, src, bytes);
    return true;
  }
  const std::byte* tryReceive(Lane& lane, const plan::Op& op, int peer, std::byte* into, std::size_t bytes, int index) {
    opIndex_ = lane.opIndex();
    std::byte* in = into ? into : plan::stagingSlot(incoming_, op, ex_.nranks_, index, bytes);
    receive(peer, in, bytes);
    return in;
  }

 private:
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
  std::vector<std::byte>& incoming_ = ex_.llIncoming_;  // received messages
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
