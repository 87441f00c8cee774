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
#include "collectives/core/pause_clock.h"
#include "collectives/host/ll_executor.h"

namespace cclab::host {
namespace {
constexpr std::chrono::milliseconds kYieldFor{2};       // as run(): yield this long before sleeping
constexpr std::chrono::milliseconds kMultiMaxSleep{1};  // a sleep may miss the ring that ends it: keep it short
constexpr int kPassesPerClockRead = 64;
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
    Clock::time_point deadline{}, spinEnd{}, yieldEnd{};
    PauseClock clock;  // restarted at each stall: the deadline counts only time this thread ran
    bool stalled = false, pastSpin = false;
    int passes = 0;
    for (;;) {
      bool moved = false, finished = true;
      haveBlocked_ = false;
      for (Task& t : tasks_) {
        if (t.done) continue;
        t.done = !t.runner.pass(moved);
        finished &= t.done;
      }
      if (finished) break;
      if (moved) {
        if (pastSpin) bumpProgress();  // as run(): counted once per wait that outlasted the spin
        stalled = pastSpin = false;
        continue;
      }
      // Nothing moved: wait for whatever the first blocked task waits for.
      if (!stalled) {
        stalled = true;
        passes = 0;
        for (Task& t : tasks_) {
          recordArrival(t);
          flushWakes(t);  // peers asleep on what these ranks sent must not sleep through this wait
        }
        const auto now = Clock::now();
        clock.restart(now);
        deadline = now + o_.timeout;
        spinEnd = std::min(now + spin_, deadline);
        yieldEnd = spinEnd + kYieldFor;
        continue;
      }
      if (ex_.abort_.raised()) fail(WaitResult::Aborted);
      if (++passes < kPassesPerClockRead && spin_.count() > 0) {
        cpuRelax();
        continue;
      }
      passes = 0;
      const auto now = clock.now();
      if (now >= deadline) fail(WaitResult::TimedOut);
      if (now < spinEnd) continue;
      pastSpin = true;
      if (now < yieldEnd) {
        std::this_thread::yield();
        continue;
      }
      WaitWord& word = *blocked_.word;
      const std::uint32_t seen = word.value.load(std::memory_order_acquire);
      word.sleepers.fetch_add(1, std::memory_order_seq_cst);
      std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with flushWakes()' fence
      if (!blockedReady())
        sleepWhileEqual(word, seen, std::min<std::chrono::nanoseconds>(deadline - now, kMultiMaxSleep));
      word.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    }
    for (Task& t : tasks_) {
      if (!t.recorded) {
        t.st->unrecorded.push_back({t.call, t.arrival});
        if (t.st->unrecorded.size() >= kMaxUnrecorded) ex_.recordArrivals(*t.st);
      }
      flushWakes(t);
    }
  }

  // One rank's LL transport (plan_runner.h) that never waits: a send needs room in its ring, a receive
  // its message's last unit (then the whole message is there, as in run()); a call that cannot proceed
  // records what it waits for (block) and fails, and the runner tries the slice again on a later pass.
  class Transport : public plan::WaitingTransport {
   public:
    Transport(MultiRun& run, int rank, RankState& st, const RankMemory& mem, std::uint32_t call)
        : run_(run), rank_(rank), st_(st), mem_(mem), call_(call) {}
    std::byte* address(const plan::Range& r, std::int64_t lo) const { return mem_.at(r, lo, run_.o_.elemSize); }

    bool trySend(Lane& lane, const plan::Op& op, const std::byte* src, std::size_t bytes) {
      LlConnection& c = run_.ex_.connection(op.channel, rank_, op.peer);
      if (!c.hasRoom(bytes)) return run_.block(*this, lane, c, c.acked(), bytes, true, op.peer, "room in its ring to") != nullptr;
      c.write(src, bytes);
      st_.sent.push_back(&c);
      return true;
    }

    // The messages of a slice already read stay in their staging slots until release.
    const std::byte* tryReceive(Lane& lane, const plan::Op& op, int peer, std::byte* into, std::size_t bytes, int index) {
      const auto i = static_cast<std::size_t>(index);
      if (have_.size() <= i) have_.resize(i + 1, nullptr);
      if (have_[i]) return have_[i];
      std::byte* in = into ? into : plan::stagingSlot(st_.incoming, op, run_.plan_.nranks, index, bytes);
      LlConnection& c = run_.ex_.connection(op.channel, peer, rank_);
      const std::size_t units = (bytes + kLlDataBytesPerUnit - 1) / kLlDataBytesPerUnit;
      std::uint32_t data = 0;
      if (!c.unitReady(units - 1, data)) return run_.block(*this, lane, c, c.bell(), bytes, false, peer, "data from");
      const std::size_t full = bytes / kLlDataBytesPerUnit;
      for (std::size_t u = 0; u < units; ++u) {
        if (!c.unitReady(u, data))  // in-order release stores make this impossible; stay correct anyway
          return run_.block(*this, lane, c, c.bell(), bytes, false, peer, "data from");
        std::memcpy(in + u * kLlDataBytesPerUnit, &data, u < full ? kLlDataBytesPerUnit : bytes - u * kLlDataBytesPerUnit);
      }
      c.finishRead(bytes);
      st_.read.push_back(&c);
      return have_[i] = in;
    }
    void release(Lane&, const plan::Op& op, int peer) { have_[static_cast<std::size_t>(plan::receiveIndex(op, peer, rank_))] = nullptr; }

    MultiRun& run_;
    int rank_;
    RankState& st_;
    const RankMemory& mem_;
    std::uint32_t call_;
    std::vector<std::byte*> have_;  // per receive of the current slice: where it was read to (nullptr: not yet)
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
    LlConnection* connection = nullptr;
    std::size_t bytes = 0;  // a receive's message, or a send's (for room)
    bool send = false;
    int rank = 0, peer = 0;
    std::size_t op = 0;
    std::uint32_t call = 0;
    const char* what = "";
  };

  // Keeps the first blocked task of this pass; nullptr (a failed call's answer).
  std::nullptr_t block(const Transport& t, const plan::RunnerLane<plan::NoLaneData>& lane, LlConnection& c, WaitWord& word,
             std::size_t bytes, bool send, int peer, const char* what) {
    if (!haveBlocked_) blocked_ = Blocked{&word, &c, bytes, send, t.rank_, peer, lane.opIndex(), t.call_, what};
    haveBlocked_ = true;
    return nullptr;
  }

  bool blockedReady() {
    LlConnection& c = *blocked_.connection;
    if (blocked_.send) return c.hasRoom(blocked_.bytes);
    std::uint32_t data = 0;
    return c.unitReady((blocked_.bytes + kLlDataBytesPerUnit - 1) / kLlDataBytesPerUnit - 1, data);
  }

  void recordArrival(Task& t) {
    if (t.recorded) return;
    t.recorded = true;
    t.st->unrecorded.push_back({t.call, t.arrival});
    if (t.st->unrecorded.size() >= kMaxUnrecorded) ex_.recordArrivals(*t.st);
  }

  static void flushWakes(Task& t) { LlExecutor::flushWakes(*t.st); }

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
