// ShmExecutor's LL path (shm_executor.h): a plan's ops over rings of flagged lines (the format of
// collectives/core/ll_ring.h) in the control segment, one ring per ordered pair of the node's ranks.
//
// The transport is the host LL path's (collectives/host/ll_transport.h), over LlLinks whose lines and
// words live in the segment. Send writes the message into the ring to its peer (waiting only, across
// calls, for room); Recv, RecvReduce and ReduceAll poll the ring from their peer for the message's last
// word, then copy it out; Copy is local. Ops run whole, in the rank's op order (a plan's channels one
// after the other over the one ring per pair: every rank runs them in the same order, so the k-th
// message on a pair is still the one the plan pairs it with). ReduceAll folds every rank's message in rank order, so every rank
// gets the same bits. Flow control is LlLink's (collectives/core/ll_ring.h).
//
// Waits are the slot path's (ShmNode::waitReady, shm_node.h: spin, yield, then a shared futex; bounded,
// with liveness checks and the job's abort word). A reader that sleeps sleeps on the pair's `bell`, a
// sender on its `acked`; whoever makes them ready wakes them: a rank fences, then checks the sleeper
// counts of the words it made ready, before it waits itself and at the end of the call.
#include <cstring>
#include <string>

#include "collectives/core/errors.h"
#include "collectives/host/ll_transport.h"
#include "collectives/host/rank_memory.h"
#include "collectives/proc/shm_executor.h"

namespace cclab::proc {

bool ShmExecutor::llFits(const plan::Plan& plan, std::size_t elemSize) const {
  if (llRingLines_ == 0 || plan.nranks != jobRanks_ || nranks_ != jobRanks_) return false;
  return host::llPlanFits(plan, elemSize, llRingLines_, false);  // the channels share one ring per pair
}

// The LL transport (host/ll_transport.h) over the rings in the control segment; every call waits
// itself, bounded, until it can proceed.
class ShmExecutor::LlRun : public host::LlTransport<LlRun, SharedWord> {
 public:
  static constexpr bool kWaits = true;
  LlRun(ShmExecutor& ex, const plan::Plan& plan, const LocalBuffers& mem, const ShmRunOptions& o, std::uint32_t call)
      : LlTransport(ex.llSent_, ex.llRead_, ex.llIncoming_, ex.nranks_, ex.node_.rank()), ex_(ex), plan_(plan), mem_(mem), o_(o),
        call_(call) {}

  // The ops in the rank's op order (whole ops, plan_runner.h), this class the transport.
  void execute() {
    plan::PlanRunner<LlRun>(*this, ex_.llRunner_, plan_, ex_.node_.rank(), {o_.elemSize, o_.reduce, 0, false}).run();
    flushWakes();
  }

  // The Place of LlTransport.
  std::byte* address(const plan::Range& r, std::int64_t lo) const {
    return host::RankMemory{mem_.input, mem_.output, mem_.scratch}.at(r, lo, o_.elemSize);
  }
  Link& to(const plan::Op& op) { return ex_.llTo_[static_cast<std::size_t>(op.peer)]; }
  Link& from(const plan::Op&, int peer) { return ex_.llFrom_[static_cast<std::size_t>(peer)]; }
  void receiving(Link&, std::size_t) {}
  [[nodiscard]] std::string where() const { return ex_.node_.head(site()); }
  // The slot path's wait (ShmNode::waitReady), after LlTransport's clock-free checks.
  template <class Ready>
  bool await(Ready& ready, const SharedWord& word, int peer, const char* what) {
    if (readyBeforeClock(ready, o_.spin.count() > 0)) return true;
    ex_.node_.waitReady(word, [&ready](std::uint32_t) { return ready(); }, peer, what, site(), o_.timeout, o_.spin);
    return true;
  }

 private:
  [[nodiscard]] ShmNode::WaitSite site() const { return {&plan_, opIndex_, call_}; }

  ShmExecutor& ex_;
  const plan::Plan& plan_;
  const LocalBuffers& mem_;
  const ShmRunOptions& o_;
  std::uint32_t call_;
};

void ShmExecutor::runLl(const plan::Plan& plan, const LocalBuffers& buffers, const ShmRunOptions& options) {
  // The fit of the whole plan (llFits) is the caller's to check once per plan, not per call.
  if (llRingLines_ == 0 || plan.nranks != jobRanks_ || nranks_ != jobRanks_)
    throw InvalidArgument("proc: no LL path on this node (" + std::to_string(nranks_) + " of " + std::to_string(jobRanks_) + " ranks)");
  if (plan::reduces(plan.collective) && options.reduce == nullptr)
    throw InvalidArgument("proc: a reducing plan needs a reduce function");
  node_.throwIfAborted(plan);
  LlRun(*this, plan, buffers, options, node_.arrive()).execute();
}

}  // namespace cclab::proc
