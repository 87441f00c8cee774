// LlExecutor (ll_executor.h): a plan's ops over flagged lines, with bounded waits.
#include "collectives/host/ll_executor.h"

#include <cstring>

#include "collectives/core/errors.h"

namespace cclab::host {
namespace {

// Waits follow wait.h (spin, yield, sleep). (A longer spin was tried: on a loaded machine, where two
// unbound rank threads may share one core, a 1 ms spin made an 8-byte call take 5 ms instead of
// 0.1-0.4 ms; docs/results/cpu-peers.md.)

// A one-shot allreduce's ops on one rank: p - 1 sends of the ReduceAll's operand, one to every peer,
// the ReduceAll (op p - 1), then a copy of its result to the output (allreduce_oneshot.cc). Null when not so.
struct GatherShape {
  const plan::Op* reduceAll = nullptr;
  plan::Range out;
};
GatherShape gatherShape(const plan::Plan& plan, int r) {
  const auto& ops = plan.ranks[static_cast<std::size_t>(r)];
  const int p = plan.nranks;
  if (static_cast<int>(ops.size()) != p + 1) return {};
  const plan::Op& all = ops[static_cast<std::size_t>(p - 1)];
  const plan::Op& copy = ops[static_cast<std::size_t>(p)];
  if (all.kind != plan::OpKind::ReduceAll || copy.kind != plan::OpKind::Copy || copy.src != all.dst ||
      copy.dst.buf != plan::Buf::Output || all.src.buf != plan::Buf::Input || copy.channel != all.channel)
    return {};
  std::vector<bool> sent(static_cast<std::size_t>(p), false);
  for (int i = 0; i < p - 1; ++i) {
    const plan::Op& s = ops[static_cast<std::size_t>(i)];
    if (s.kind != plan::OpKind::Send || s.src != all.src || s.channel != all.channel || s.peer == r || s.peer < 0 ||
        s.peer >= p || sent[static_cast<std::size_t>(s.peer)])
      return {};
    sent[static_cast<std::size_t>(s.peer)] = true;
  }
  return {&all, copy.dst};
}

// gatherShape of a plan gathers() accepted, without checking it again (no allocation: on every call).
GatherShape gatherParts(const plan::Plan& plan, int r) {
  const auto& ops = plan.ranks[static_cast<std::size_t>(r)];
  const auto p = static_cast<std::size_t>(plan.nranks);
  return {&ops[p - 1], ops[p].dst};
}

}  // namespace

LlExecutor::LlExecutor(int nranks, std::chrono::nanoseconds spin, LlConfig config)
    : ExecutorBase(nranks, true), spin_(spin), ringLines_(config.ringLines ? config.ringLines : llDefaultRingLines(nranks)),
      flagPeriod_(config.flagPeriod),
      connections_(static_cast<std::size_t>(kLlMaxChannels) * static_cast<std::size_t>(nranks) * static_cast<std::size_t>(nranks)) {
  LlConnection check(ringLines_, flagPeriod_);  // refuses a bad ring size or flag period now, not at first use
  ranks_ = std::make_unique<RankState[]>(static_cast<std::size_t>(nranks));
}

LlExecutor::~LlExecutor() {
  for (auto& c : connections_) delete c.load(std::memory_order_acquire);
}

LlConnection& LlExecutor::connection(int channel, int from, int to) {
  auto& slot = connections_[(static_cast<std::size_t>(channel) * static_cast<std::size_t>(nranks_) + static_cast<std::size_t>(from)) *
                                static_cast<std::size_t>(nranks_) +
                            static_cast<std::size_t>(to)];
  LlConnection* c = slot.load(std::memory_order_acquire);
  if (c) return *c;
  // First use, by the sender or the reader, whichever comes first: the other one adopts it.
  auto made = std::make_unique<LlConnection>(ringLines_, flagPeriod_);
  if (slot.compare_exchange_strong(c, made.get(), std::memory_order_acq_rel, std::memory_order_acquire))
    return *made.release();
  return *c;
}

std::uint64_t LlExecutor::progress() const {
  std::uint64_t sum = 0;
  for (int r = 0; r < nranks_; ++r) sum += ranks_[static_cast<std::size_t>(r)].progress.load(std::memory_order_relaxed);
  return sum;
}

void LlExecutor::recordArrivals(RankState& st) const {
  for (const auto& [call, when] : st.unrecorded) arrivals_.record(static_cast<int>(&st - ranks_.get()), call, when);
  st.unrecorded.clear();
}

ArrivalStats LlExecutor::arrivalStats() const {
  for (int r = 0; r < nranks_; ++r) recordArrivals(ranks_[static_cast<std::size_t>(r)]);
  return arrivals_.stats();
}

void LlExecutor::resetArrivals() {
  for (int r = 0; r < nranks_; ++r) ranks_[static_cast<std::size_t>(r)].unrecorded.clear();
  resetLog();
}

void LlExecutor::wakeWaiters() {
  for (const auto& slot : connections_)
    if (LlConnection* c = slot.load(std::memory_order_acquire)) {
      c->bell().wakeAll();
      c->acked().wakeAll();
    }
}

// One rank's run() of one plan: the LL transport (ll_transport.h) over this executor's connections,
// whose calls wait themselves, bounded, until they can proceed.
class LlExecutor::RankRun : public LlTransport<RankRun, WaitWord> {
 public:
  static constexpr bool kWaits = true;
  RankRun(LlExecutor& ex, int rank, const plan::Plan& plan, const RankMemory& mem, const RunOptions& o,
          std::uint32_t call)
      : LlTransport(ex.ranks_[static_cast<std::size_t>(rank)].sent, ex.ranks_[static_cast<std::size_t>(rank)].read,
                    ex.ranks_[static_cast<std::size_t>(rank)].incoming, ex.nranks_, rank),
        ex_(ex), st_(ex.ranks_[static_cast<std::size_t>(rank)]), rank_(rank), plan_(plan), mem_(mem), o_(o), call_(call) {}

  // LlExecutor::gatherFold's part (rank 0): shape is rank 0's (gatherShape), its count > 0.
  void gatherFold(const GatherShape& shape, std::span<std::byte* const> outputs) {
    const plan::Op& all = *shape.reduceAll;
    opIndex_ = static_cast<std::size_t>(ex_.nranks_ - 1);
    const std::size_t elems = static_cast<std::size_t>(all.count());
    const std::size_t bytes = elems * o_.elemSize;
    std::byte* acc = buffer(st_.acc, bytes);
    std::byte* in = buffer(st_.incoming, bytes);
    std::memcpy(acc, address(all.src, 0), bytes);
    for (int q = 1; q < ex_.nranks_; ++q) {  // ReduceAll's fold: v_0 (op) v_1 (op) ... in rank order
      clocked_ = false;
      receive(ex_.connection(all.channel, q, 0), q, in, bytes);
      // Peer q's arrival, recorded here for it (it reads no clock): rank 0's own when its message came
      // within the wait's first clock-free checks (a few µs at most), else when rank 0 found it.
      ex_.holdArrival(ex_.ranks_[static_cast<std::size_t>(q)], call_, clocked_ ? Clock::now() : arrivedAt_);
      o_.reduce(acc, acc, in, elems);
    }
    const auto offset = static_cast<std::size_t>(shape.out.offset) * o_.elemSize;
    for (std::byte* out : outputs) std::memcpy(out + offset, acc, bytes);
    // No sender can sleep for room on these rings (in a gathered call a worker never waits, and any
    // earlier call had ended before this one began): the wake-up fence for them is skipped.
    st_.read.clear();
    finish();
  }

  // The ops in the rank's op order (whole ops, plan_runner.h), this class the transport.
  void execute() {
    plan::PlanRunner<RankRun>(*this, st_.runner, plan_, rank_, {o_.elemSize, o_.reduce, 0, false}).run();
    finish();
  }

  // The Place of LlTransport.
  std::byte* address(const plan::Range& r, std::int64_t lo) const { return mem_.at(r, lo, o_.elemSize); }
  LlConnection& to(const plan::Op& op) { return ex_.connection(op.channel, rank_, op.peer); }
  LlConnection& from(const plan::Op& op, int peer) { return ex_.connection(op.channel, peer, rank_); }
  // A rank's first receive takes its arrival time (recordArrival) while the line it polls is on its
  // way: the clock read (~30 ns here) then overlaps that transfer instead of following it (at the
  // first wait) or delaying the end of the call (a rank that never waited).
  void receiving(Link& link, std::size_t bytes) {
    if (recorded_) return;
    link.prefetch(bytes);
    recordArrival();
  }
  [[nodiscard]] std::string where() const { return ex_.where(plan_) + ": rank " + std::to_string(rank_); }

  // Waits until ready() (its first check already failed): wait.h's policy on `word` (busy for the spin
  // budget, then yielding, then asleep); throws TimeoutError at the deadline or when the executor aborts.
  template <class Ready>
  bool await(Ready& ready, WaitWord& word, int peer, const char* what) {
    recordArrival();
    if (readyBeforeClock(ready, ex_.spin_.count() > 0)) return true;
    clocked_ = true;
    if (const WaitResult r = ex_.waitFor(word, ready, st_, o_.timeout, ex_.spin_); r != WaitResult::Ready)
      ex_.waitFailed(r, plan_, rank_, opIndex_, -1, what, peer, o_.timeout, call_);
    return true;
  }

 private:
  // A rank that never waited records its arrival here, held back (recordArrival): the log's shared
  // counters would otherwise sit between its last op and the end of the call.
  void finish() {
    recordArrival();
    flushWakes();
  }

  static std::byte* buffer(std::vector<std::byte>& v, std::size_t bytes) {
    if (v.size() < bytes) v.resize(bytes);
    return v.data();
  }

  // Held back like a call that never waits (execute()): recording at once made every waiting call
  // write the log's shared counters, which the peers write too (a line moving between cores per call).
  // The arrival time is read here, at the rank's first wait (after its sends, a few ns after it
  // arrived), or at the end of a call that never waited: a clock read (~30 ns) then overlaps the wait
  // instead of delaying the rank's first send.
  void recordArrival() {
    if (recorded_) return;
    recorded_ = true;
    arrivedAt_ = Clock::now();
    ex_.holdArrival(st_, call_, arrivedAt_);
  }

  LlExecutor& ex_;
  RankState& st_;
  int rank_;
  const plan::Plan& plan_;
  const RankMemory& mem_;
  const RunOptions& o_;
  std::uint32_t call_;
  bool recorded_ = false;
  Clock::time_point arrivedAt_{};  // this rank's arrival, once recorded_
  bool clocked_ = false;           // a wait went past its clock-free checks (gatherFold)
};

void LlExecutor::run(int rank, const plan::Plan& plan, const RankMemory& memory, const RunOptions& options) {
  check(rank, plan);
  RankRun(*this, rank, plan, memory, options, begin(rank, plan, options, ranks_[static_cast<std::size_t>(rank)].calls)).execute();
}

bool LlExecutor::gathers(const plan::Plan& plan) {
  if (plan.collective != plan::Collective::AllReduce || plan.algorithm != plan::Algorithm::OneShot || plan.nranks < 2 ||
      plan.nchannels != 1)
    return false;
  const GatherShape first = gatherShape(plan, 0);
  // Not an empty call: a worker with nothing to send would still be in it (its start delay, say) when
  // rank 0, which has nothing to wait for, returns.
  if (!first.reduceAll || first.reduceAll->count() <= 0) return false;
  for (int r = 1; r < plan.nranks; ++r) {
    const GatherShape s = gatherShape(plan, r);
    if (!s.reduceAll || s.reduceAll->src != first.reduceAll->src || s.out != first.out ||
        s.reduceAll->channel != first.reduceAll->channel)
      return false;
  }
  return true;
}

void LlExecutor::gatherSend(int rank, const plan::Plan& plan, const RankMemory& memory, const RunOptions& options) {
  if (rank < 1 || rank >= nranks_) throw InvalidArgument("host ll: gatherSend rank " + std::to_string(rank) + " out of range");
  begin(rank, plan, options, ranks_[static_cast<std::size_t>(rank)].calls);
  const plan::Op& all = *gatherParts(plan, rank).reduceAll;
  const std::size_t bytes = static_cast<std::size_t>(all.count()) * options.elemSize;
  // Its arrival is recorded by rank 0 (RankRun::gatherFold): a clock read here (~30 ns) would delay
  // the send, and after the send this rank may touch nothing of the call. (gathers() refuses empty calls.)
  LlConnection& c = connection(all.channel, rank, 0);
  if (!c.hasRoom(bytes)) {  // rank 0 read every earlier message before its call returned
    const std::string why = where(plan) + ": rank " + std::to_string(rank) + " found its ring to rank 0 full";
    fail(why);
    throw Error(why);
  }
  c.write(memory.at(all.src, 0, options.elemSize), bytes);
  // Wakes rank 0 should it sleep on the bell (flushWakes' protocol); the connection outlives the call.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (c.bell().sleepers.load(std::memory_order_relaxed) != 0) c.bell().add(1);
}

void LlExecutor::gatherFold(const plan::Plan& plan, const RankMemory& memory, std::span<std::byte* const> outputs,
                            const RunOptions& options) {
  if (plan.nranks != nranks_ || outputs.size() != static_cast<std::size_t>(nranks_))
    throw InvalidArgument("host ll: gatherFold needs a plan and outputs for " + std::to_string(nranks_) + " ranks");
  RankRun(*this, 0, plan, memory, options, begin(0, plan, options, ranks_[0].calls)).gatherFold(gatherParts(plan, 0), outputs);
}

}  // namespace cclab::host
