// LlExecutor::runRanks (ll_executor.h): several ranks' ops of one plan on one thread, cooperatively.
//
// Each rank is a task: a PlanRunner (plan_runner.h) over a transport that never waits. A pass steps
// every task as far as it goes: a Send needs room in its ring, a receive needs its message's last
// unit (then the whole message is there, as in run()); Copy always moves. When a
// pass moves nothing, the thread waits: it keeps passing (busy for `spin`, then yielding for 2 ms),
// then sleeps on the word of the first blocked task for at most kMultiMaxSleep (the other blocked
// tasks' senders do not ring it, so a sleep is short), and gives up at the timeout. Ops, their
// order and the bits are run()'s: a rank's ReduceAll folds in rank order whatever thread runs it.
#include <algorithm>
#include <cstring>
#include <deque>
#include <thread>

#include "collectives/core/errors.h"
#include "collectives/host/ll_executor.h"

namespace cclab::host {
namespace {
constexpr std::chrono::milliseconds kMultiMaxSleep{1};  // a sleep may miss the ring that ends it: keep it short
}  // namespace

class LlExecutor::MultiRun {
 public:
  MultiRun(LlExecutor& ex, const plan::Plan& plan, const RunOptions& o, std::chrono::nanoseconds spin)
      : ex_(ex), plan_(plan), o_(o), spin_(spin) {}

  void add(int rank, const RankMemory& mem, Clock::time_point arrival) {
    RankState& st = ex_.ranks_[static_cast<std::size_t>(rank)];
    const std::uint32_t call = st.calls.load(std::memory_order_relaxed) + 1;  // only this thread runs the rank now
    st.calls.store(call, std::memory_order_release);
    Task& t = tasks_.emplace_back(*this, rank, st, mem, call, arrival);
    t.runner.start();
  }

  void execute() {
    bool finished = false;
    while (!finished) {
      if (pass(finished) || finished) continue;
      // Nothing moved: wait.h's wait on the word of the first blocked task, passing at every check and
      // asleep at most kMultiMaxSleep at a time.
      for (Task& t : tasks_) {
        recordArrival(t);
        flushWakes(t);  // peers asleep on what these ranks sent must not sleep through this wait
      }
      WaitWord& word = *blocked_.word;
      const auto ready = [&](std::uint32_t) {
        // Once this thread counts itself a sleeper, a fence orders that count before the pass's reads,
        // pairing with flushWakes()' fence (one of the two sees the other).
        if (word.sleepers.load(std::memory_order_relaxed) != 0) std::atomic_thread_fence(std::memory_order_seq_cst);
        return pass(finished) || finished;
      };
      const auto start = Clock::now();
      const WaitResult r = waitUntil(word, ready, ex_.abort_.flag(), start + o_.timeout, spin_, kMultiMaxSleep);
      if (r != WaitResult::Ready) fail(r);
      if (Clock::now() >= start + spin_) bumpProgress();  // as run(): a wait that outlasted the spin
    }
    for (Task& t : tasks_) {
      if (!t.recorded) {
        t.st->unrecorded.push_back({t.call, t.arrival});
        if (t.st->unrecorded.size() >= kMaxUnrecorded) ex_.recordArrivals(*t.st);
      }
      flushWakes(t);
    }
  }

  // One rank's LL transport (ll_transport.h) that never waits: a send needs room in its ring, a receive
  // its message's last unit (then the whole message is there, as in run()); a call that cannot proceed
  // records what it waits for (block) and fails, and the runner tries the slice again on a later pass.
  class Transport : public LlTransport<Transport, WaitWord> {
   public:
    static constexpr bool kWaits = false;
    Transport(MultiRun& run, int rank, RankState& st, const RankMemory& mem, std::uint32_t call)
        : LlTransport(st.sent, st.read, st.incoming, run.plan_.nranks, rank), run_(run), rank_(rank), mem_(mem), call_(call) {}
    std::byte* address(const plan::Range& r, std::int64_t lo) const { return mem_.at(r, lo, run_.o_.elemSize); }
    LlConnection& to(const plan::Op& op) { return run_.ex_.connection(op.channel, rank_, op.peer); }
    LlConnection& from(const plan::Op& op, int peer) { return run_.ex_.connection(op.channel, peer, rank_); }
    void receiving(Link&, std::size_t) {}
    [[nodiscard]] std::string where() const { return LlExecutor::where(run_.plan_) + ": rank " + std::to_string(rank_); }
    template <class Ready>
    bool await(Ready&, WaitWord& word, int peer, const char* what) {
      run_.block(*this, word, peer, what);
      return false;
    }

    MultiRun& run_;
    int rank_;
    const RankMemory& mem_;
    std::uint32_t call_;
    using LlTransport::opIndex_;
  };

 private:
  struct Task {
    Task(MultiRun& run, int rank, RankState& state, const RankMemory& mem, std::uint32_t c, Clock::time_point a)
        : st(&state), call(c), arrival(a), transport(run, rank, state, mem, c),
          runner(transport, state.runner, run.plan_, rank, {run.o_.elemSize, run.o_.reduce, 0, false}) {}
    RankState* st;
    std::uint32_t call;
    Clock::time_point arrival;
    bool done = false;
    bool recorded = false;
    Transport transport;
    plan::PlanRunner<Transport> runner;  // the rank's ops in the order it runs them, whole
  };
  struct Blocked {  // what the first blocked task of the last pass waits for
    WaitWord* word = nullptr;
    int rank = 0, peer = 0;
    std::size_t op = 0;
    std::uint32_t call = 0;
    const char* what = "";
  };

  // Keeps the first blocked task of this pass.
  void block(const Transport& t, WaitWord& word, int peer, const char* what) {
    if (!haveBlocked_) blocked_ = Blocked{&word, t.rank_, peer, t.opIndex_, t.call_, what};
    haveBlocked_ = true;
  }

  // Steps every task as far as it goes: whether any moved; `finished` once every task is done.
  bool pass(bool& finished) {
    bool moved = false;
    finished = true;
    haveBlocked_ = false;
    for (Task& t : tasks_) {
      if (t.done) continue;
      t.done = !t.runner.pass(moved);
      finished = finished && t.done;
    }
    return moved;
  }

  void recordArrival(Task& t) {
    if (t.recorded) return;
    t.recorded = true;
    t.st->unrecorded.push_back({t.call, t.arrival});
    if (t.st->unrecorded.size() >= kMaxUnrecorded) ex_.recordArrivals(*t.st);
  }

  static void flushWakes(Task& t) { t.transport.flushWakes(); }

  void bumpProgress() {
    RankState& st = ex_.ranks_[static_cast<std::size_t>(blocked_.rank)];
    st.progress.store(st.progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  [[noreturn]] void fail(WaitResult r) {
    ex_.abort_.throwWaitFailure(r, where(plan_), blocked_.rank, " at op " + std::to_string(blocked_.op),
                                blocked_.what + (" rank " + std::to_string(blocked_.peer)), o_.timeout,
                                [&] { return ex_.lateRanks(blocked_.call); }, [&](const std::string& why) { ex_.fail(why); });
  }

  LlExecutor& ex_;
  const plan::Plan& plan_;
  const RunOptions& o_;
  std::chrono::nanoseconds spin_;
  std::deque<Task> tasks_;  // a deque: a task's runner refers to its transport, so tasks never move
  Blocked blocked_;
  bool haveBlocked_ = false;
};

void LlExecutor::runRanks(std::span<const int> ranks, const plan::Plan& plan, std::span<const RankMemory> memories,
                          const RunOptions& options, std::chrono::nanoseconds spin) {
  if (ranks.size() != memories.size()) throw InvalidArgument("host ll: runRanks needs one memory per rank");
  if (plan.nranks != nranks_) throw InvalidArgument("host ll: plan for " + std::to_string(plan.nranks) + " ranks");
  if (options.startDelay.count() > 0) throw InvalidArgument("host ll: runRanks takes no start delay");
  if (broken()) throw Error("host ll: communicator unusable after an earlier failure (" + abort_.reason() + ")");
  const auto arrival = Clock::now();  // ready to communicate (one reading for the thread's ranks)
  MultiRun run(*this, plan, options, spin);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0 || ranks[i] >= nranks_) throw InvalidArgument("host ll: rank " + std::to_string(ranks[i]) + " out of range");
    run.add(ranks[i], memories[i], arrival);
  }
  run.execute();
}

}  // namespace cclab::host
