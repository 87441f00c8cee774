// LlExecutor::runRanks (ll_executor.h): several ranks' ops of one plan on one thread, cooperatively.
//
// Each rank is a task with a cursor (its op, and inside a ReduceAll the next rank to fold). A pass
// steps every task as far as it goes without waiting: a Send needs room in its ring, a receive needs
// its message's last unit (then the whole message is there, as in run()); Copy always moves. When a
// pass moves nothing, the thread waits: it keeps passing (busy for `spin`, then yielding for 2 ms),
// then sleeps on the word of the first blocked task for at most kMultiMaxSleep (the other blocked
// tasks' senders do not ring it, so a sleep is short), and gives up at the timeout. Ops, their
// order and the bits are run()'s: a rank's ReduceAll folds in rank order whatever thread runs it.
#include <algorithm>
#include <cstring>
#include <thread>

#include "collectives/core/errors.h"
#include "collectives/host/ll_executor.h"

namespace cclab::host {
namespace {
constexpr std::chrono::milliseconds kYieldFor{2};       // as run(): yield this long before sleeping
constexpr std::chrono::milliseconds kMultiMaxSleep{1};  // a sleep may miss the ring that ends it: keep it short
constexpr int kPassesPerClockRead = 64;

std::string where(const plan::Plan& plan) {
  return "host " + std::string(plan::name(plan.collective)) + "/" + std::string(plan::name(plan.algorithm)) + " (ll)";
}
}  // namespace

class LlExecutor::MultiRun {
 public:
  MultiRun(LlExecutor& ex, const plan::Plan& plan, const RunOptions& o, std::chrono::nanoseconds spin)
      : ex_(ex), plan_(plan), o_(o), spin_(spin) {}

  void add(int rank, const RankMemory& mem, Clock::time_point arrival) {
    RankState& st = ex_.ranks_[static_cast<std::size_t>(rank)];
    const std::uint32_t call = st.calls.load(std::memory_order_relaxed) + 1;  // only this thread runs the rank now
    st.calls.store(call, std::memory_order_release);
    tasks_.push_back(Task{rank, &st, &mem, call, arrival});
    tasks_.back().sequential = plan::sequentialOps(plan_, rank);  // phase by phase when the plan has deps (plan.h)
  }

  void execute() {
    Clock::time_point deadline{}, spinEnd{}, yieldEnd{};
    bool stalled = false, pastSpin = false;
    int passes = 0;
    for (;;) {
      bool moved = false, finished = true;
      haveBlocked_ = false;
      for (Task& t : tasks_) {
        if (t.done) continue;
        moved |= step(t);
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
        deadline = now + o_.timeout;
        spinEnd = std::min(now + spin_, deadline);
        yieldEnd = spinEnd + kYieldFor;
        continue;
      }
      if (ex_.abort_.raised()) aborted();
      if (++passes < kPassesPerClockRead && spin_.count() > 0) {
        cpuRelax();
        continue;
      }
      passes = 0;
      const auto now = Clock::now();
      if (now >= deadline) timedOut();
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

 private:
  struct Task {
    int rank;
    RankState* st;
    const RankMemory* mem;
    std::uint32_t call;
    Clock::time_point arrival;
    std::size_t op = 0;
    int q = 0;  // inside a ReduceAll: the next rank to fold
    bool done = false;
    bool recorded = false;
    plan::SequentialOps sequential{};  // the rank's ops in the order it runs them
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

  static std::byte* buffer(std::vector<std::byte>& v, std::size_t bytes) {
    if (v.size() < bytes) v.resize(bytes);
    return v.data();
  }

  // Moves task t as far as it goes; true when it moved at all. Sets blocked_ for the first task of a
  // pass that stops short of its end.
  bool step(Task& t) {
    const std::span<const plan::Op> ops = t.sequential.ops();
    bool moved = false;
    for (; t.op < ops.size(); ++t.op, t.q = 0, moved = true) {
      const plan::Op& op = ops[t.op];
      if (op.count() <= 0) continue;
      const auto elems = static_cast<std::size_t>(op.count());
      const std::size_t bytes = elems * o_.elemSize;
      const std::byte* src = op.reads() ? t.mem->at(op.src, 0, o_.elemSize) : nullptr;
      std::byte* dst = op.writes() ? t.mem->at(op.dst, 0, o_.elemSize) : nullptr;
      switch (op.kind) {
        case plan::OpKind::Send: {
          LlConnection& c = ex_.connection(op.channel, t.rank, op.peer);
          if (!c.hasRoom(bytes)) {
            block(t, c, c.acked(), bytes, true, op.peer, "room in its ring to");
            return moved;
          }
          c.write(src, bytes);
          t.st->sent.push_back(&c);
          break;
        }
        case plan::OpKind::Copy:
          if (src != dst) std::memmove(dst, src, bytes);
          break;
        case plan::OpKind::Recv:
          if (!tryReceive(t, op.channel, op.peer, dst, bytes)) return moved;
          break;
        case plan::OpKind::RecvReduce: {
          std::byte* in = buffer(t.st->incoming, bytes);
          if (!tryReceive(t, op.channel, op.peer, in, bytes)) return moved;
          o_.reduce(dst, src, in, elems);
          break;
        }
        case plan::OpKind::ReduceAll: {
          std::byte* acc = buffer(t.st->acc, bytes);  // kept across passes (the rank's own)
          std::byte* in = buffer(t.st->incoming, bytes);
          for (; t.q < ex_.nranks_; ++t.q, moved = true) {
            const std::byte* v = src;
            if (t.q != t.rank) {
              if (!tryReceive(t, op.channel, t.q, in, bytes)) return moved;
              v = in;
            }
            if (t.q == 0)
              std::memcpy(acc, v, bytes);
            else
              o_.reduce(acc, acc, v, elems);
          }
          std::memcpy(dst, acc, bytes);
          break;
        }
      }
    }
    t.done = true;
    return true;
  }

  bool tryReceive(Task& t, int channel, int peer, std::byte* dst, std::size_t bytes) {
    if (bytes == 0) return true;  // an empty message has no units (and was never sent)
    LlConnection& c = ex_.connection(channel, peer, t.rank);
    const std::size_t units = (bytes + kLlDataBytesPerUnit - 1) / kLlDataBytesPerUnit;
    std::uint32_t data = 0;
    if (!c.unitReady(units - 1, data)) {  // the last unit first: then the rest is there (run())
      block(t, c, c.bell(), bytes, false, peer, "data from");
      return false;
    }
    const std::size_t full = bytes / kLlDataBytesPerUnit;
    for (std::size_t i = 0; i < units; ++i) {
      if (!c.unitReady(i, data)) {  // in-order release stores make this impossible; stay correct anyway
        block(t, c, c.bell(), bytes, false, peer, "data from");
        return false;
      }
      std::memcpy(dst + i * kLlDataBytesPerUnit, &data, i < full ? kLlDataBytesPerUnit : bytes - i * kLlDataBytesPerUnit);
    }
    c.finishRead(bytes);
    t.st->read.push_back(&c);
    return true;
  }

  void block(const Task& t, LlConnection& c, WaitWord& word, std::size_t bytes, bool send, int peer, const char* what) {
    if (haveBlocked_) return;  // keep the first blocked task of this pass
    haveBlocked_ = true;
    blocked_ = Blocked{&word, &c, bytes, send, t.rank, peer, t.op, t.call, what};
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

  // As RankRun::flushWakes: wakes the peers asleep on what the task's rank wrote or read.
  static void flushWakes(Task& t) {
    RankState& st = *t.st;
    if (st.sent.empty() && st.read.empty()) return;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (LlConnection* c : st.sent)
      if (c->bell().sleepers.load(std::memory_order_relaxed) != 0) c->bell().add(1);
    for (LlConnection* c : st.read)
      if (c->acked().sleepers.load(std::memory_order_relaxed) != 0) c->acked().wakeAll();
    st.sent.clear();
    st.read.clear();
  }

  void bumpProgress() {
    RankState& st = ex_.ranks_[static_cast<std::size_t>(blocked_.rank)];
    st.progress.store(st.progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  [[noreturn]] void timedOut() {
    // Name the cause first: ranks that never started this call, not only the peer waited for.
    const std::string lateText = ex_.lateRanks(blocked_.call);
    const std::string msg = where(plan_) + ": " + (lateText.empty() ? "" : lateText + "; ") + "rank " +
                            std::to_string(blocked_.rank) + " timed out after " + milliseconds(o_.timeout) + " at op " +
                            std::to_string(blocked_.op) + " waiting for " + blocked_.what + " rank " + std::to_string(blocked_.peer);
    ex_.fail(msg);
    throw TimeoutError(msg);
  }

  [[noreturn]] void aborted() {
    throw TimeoutError(where(plan_) + ": rank " + std::to_string(blocked_.rank) + " aborted at op " + std::to_string(blocked_.op) +
                       " while waiting for " + blocked_.what + " rank " + std::to_string(blocked_.peer) + " (" +
                       ex_.abort_.reason() + ")");
  }

  LlExecutor& ex_;
  const plan::Plan& plan_;
  const RunOptions& o_;
  std::chrono::nanoseconds spin_;
  std::vector<Task> tasks_;
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
