// LlExecutor::runRanks (ll_executor.h): several ranks' ops of one plan on one thread, cooperatively.
//
// Each rank is a task: a PlanRunner (plan_runner.h) over a transport that never waits. A pass steps
// every task as far as it goes: a Send needs room in its ring, a receive needs its message's last
// unit (then the whole message is there, as in run()); Copy always moves. When a
// pass moves nothing, the thread waits: it keeps passing (busy for `spin`, then yielding for 2 ms),
// then sleeps on the word of the first blocked task for at most kMultiMaxSleep (the other blocked
// tasks' senders do not ring it, so a sleep is short), and gives up at the timeout. Ops, their
// order and the bits are run()'s: a rank's ReduceAll folds in rank order whatever thread runs it.
#include <deque>

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
    Task& t = tasks_.emplace_back(*this, rank, st, mem, nextCall(st.calls), arrival);  // only this thread runs the rank now
    t.runner.start();
  }

  void execute() {
    bool finished = false;
    while (!finished) {
      if (pass(finished) || finished) continue;
      // Nothing moved: wait.h's wait on the word of the first blocked task, passing at every check and
      // asleep at most kMultiMaxSleep at a time.
      recordAndWake();
      const auto ready = [&] { return pass(finished) || finished; };
      const Blocked& b = blocked_;  // as the last pass left it: a failed wait names it
      if (const WaitResult r = ex_.waitFor(*b.word, ready, ex_.ranks_[static_cast<std::size_t>(b.rank)], o_.timeout, spin_, kMultiMaxSleep);
          r != WaitResult::Ready)
        ex_.waitFailed(r, plan_, b.rank, b.op, -1, b.what, b.peer, o_.timeout, b.call);
    }
    recordAndWake();
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
    [[nodiscard]] std::string where() const { return run_.ex_.where(run_.plan_) + ": rank " + std::to_string(rank_); }
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

  // Before a wait and at the end: every task's arrival held for the log (once), and the wakes it owes
  // (peers asleep on what these ranks sent must not sleep through this wait).
  void recordAndWake() {
    for (Task& t : tasks_) {
      if (!t.recorded) ex_.holdArrival(*t.st, t.call, t.arrival);
      t.recorded = true;
      t.transport.flushWakes();
    }
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
  for (const int r : ranks) check(r, plan);
  if (options.startDelay.count() > 0) throw InvalidArgument("host ll: runRanks takes no start delay");
  checkUsable();
  const auto arrival = Clock::now();  // ready to communicate (one reading for the thread's ranks)
  MultiRun run(*this, plan, options, spin);
  for (std::size_t i = 0; i < ranks.size(); ++i) run.add(ranks[i], memories[i], arrival);
  run.execute();
}

}  // namespace cclab::host
