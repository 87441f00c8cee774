#include "collectives/mpi/mpi_executor.h"

#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/mpi/mpi_links.h"
#include "collectives/plan/phase_deps.h"
#include "collectives/plan/slice_walk.h"

namespace cclab::mpi {
namespace {

using Clock = std::chrono::steady_clock;

std::string where(const plan::Plan& p) {
  return "proc " + std::string(plan::name(p.collective)) + "/" + std::string(plan::name(p.algorithm));
}

// One rank's run of one plan: its channels' cursors, its sends in flight, its posted receives.
class RankRun {
 public:
  RankRun(const World& world, const plan::Plan& plan, const MpiMemory& mem, const MpiRunOptions& o)
      : world_(world), plan_(plan), mem_(mem), o_(o), rank_(world.rank()), sends_(world), gates_(plan.deps) {
    laneOf_.assign(static_cast<std::size_t>(plan.nchannels), -1);
    int channel = 0;
    for (std::span<const plan::Op> ops : plan::channelOps(plan, rank_)) {
      if (!ops.empty()) {
        laneOf_[static_cast<std::size_t>(channel)] = static_cast<int>(channels_.size());
        channels_.push_back({channel, ops, plan::SliceCursor(ops, o.sliceElems), {}, {}, {}});
      }
      ++channel;
    }
  }

  void execute() {
    auto lastProgress = Clock::now();
    for (;;) {
      bool progress = false, done = true;
      for (Channel& c : channels_) {
        while (!c.cursor.done() && gateOpen(c) && step(c)) {
          c.cursor.advance();
          progress = true;
        }
        done = done && c.cursor.done();
      }
      progress = sends_.prune() || progress;
      if (done) break;
      idle(progress, lastProgress, "data");
    }
    lastProgress = Clock::now();
    while (sends_.sendsInFlight() > 0) {
      int peer = -1;
      if (sends_.inFlight(nullptr, SIZE_MAX, peer)) waitingFor_ = {peer};
      idle(sends_.prune(), lastProgress, "its last sends to be received");
    }
  }

 private:
  struct Channel {
    int channel;
    std::span<const plan::Op> ops;
    plan::SliceCursor cursor;
    std::vector<MPI_Request> recvs;  // the current slice's posted receives (empty: none posted)
    std::vector<int> from;           // their sources
    std::vector<std::byte> staging;  // RecvReduce, ReduceAll: received slices
    int gatesPassed = -1;            // the last phase whose deps (plan.h) were met
  };

  // May channel c run its current phase: has every channel it depends on (phase_deps.h) finished the
  // phases the dep names? Only this rank's channels open a gate, and a pass runs them all, so a gated
  // channel simply waits for the next pass. A send's read is not waited for here: writable() checks
  // every send in flight, of any channel.
  bool gateOpen(Channel& c) {
    const int phase = c.ops[c.cursor.opIndex()].phase;
    if (phase == c.gatesPassed) return true;
    const auto walkerOf = [&](int channel) -> const plan::SliceCursor* {
      const int other = laneOf_[static_cast<std::size_t>(channel)];
      return other < 0 ? nullptr : &channels_[static_cast<std::size_t>(other)].cursor;  // none: no ops on this rank
    };
    if (!plan::gatesMet(gates_, c.channel, phase, walkerOf)) return false;
    c.gatesPassed = phase;
    return true;
  }
  std::byte* address(const plan::Range& r, std::int64_t lo) const { return mem_.at(r, lo, o_.elemSize); }

  // May [dst, dst+bytes) be written: no send from there still in flight?
  bool writable(const std::byte* dst, std::size_t bytes) {
    sends_.prune();
    int peer = -1;
    if (!sends_.inFlight(dst, bytes, peer)) return true;
    waitingFor_ = {peer};
    return false;
  }

  // Runs channel c's current slice; false if it must wait.
  bool step(Channel& c) {
    const plan::Op& op = c.ops[c.cursor.opIndex()];
    const auto [lo, hi] = c.cursor.sliceRange();
    const std::size_t elems = static_cast<std::size_t>(hi - lo), bytes = elems * o_.elemSize;
    const std::byte* src = op.reads() ? address(op.src, lo) : nullptr;
    std::byte* dst = op.writes() ? address(op.dst, lo) : nullptr;
    switch (op.kind) {
      case plan::OpKind::Send: {
        if (sends_.sendsInFlight() >= MpiExecutor::kMaxSendsInFlight && !sends_.prune()) {
          waitingFor_ = {op.peer};
          return false;
        }
        sends_.send(op.peer, op.channel, src, bytes);
        return true;
      }
      case plan::OpKind::Copy:
        if (!writable(dst, bytes)) return false;
        if (src != dst) std::memmove(dst, src, bytes);
        return true;
      case plan::OpKind::Recv:
      case plan::OpKind::RecvReduce:
      case plan::OpKind::ReduceAll: return receive(c, op, src, dst, elems, bytes);
    }
    return false;
  }

  bool receive(Channel& c, const plan::Op& op, const std::byte* src, std::byte* dst, std::size_t elems, std::size_t bytes) {
    if (c.recvs.empty()) {  // post this slice's receives
      if (!writable(dst, bytes)) return false;  // Recv lands in dst directly
      const bool all = op.kind == plan::OpKind::ReduceAll;
      c.from.clear();
      if (all) {
        for (int q = 0; q < plan_.nranks; ++q)
          if (q != rank_) c.from.push_back(q);
      } else {
        c.from.push_back(op.peer);
      }
      if (op.kind != plan::OpKind::Recv && c.staging.size() < bytes * c.from.size()) c.staging.resize(bytes * c.from.size());
      c.recvs.assign(c.from.size(), MPI_REQUEST_NULL);
      for (std::size_t i = 0; i < c.from.size(); ++i) {
        std::byte* into = op.kind == plan::OpKind::Recv ? dst : c.staging.data() + i * bytes;
        check(MPI_Irecv(into, messageBytes(bytes), MPI_BYTE, c.from[i], op.channel, world_.comm(), &c.recvs[i]), "MPI_Irecv");
      }
    }
    int flag = 0;
    check(MPI_Testall(static_cast<int>(c.recvs.size()), c.recvs.data(), &flag, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (!flag) {
      waitingFor_ = c.from;
      return false;
    }
    if (!writable(dst, bytes)) return false;  // the receives are complete (requests null); only the write waits
    c.recvs.clear();
    if (op.kind == plan::OpKind::RecvReduce) o_.reduce(dst, src, c.staging.data(), elems);
    if (op.kind == plan::OpKind::ReduceAll) foldInRankOrder(c, src, dst, elems, bytes);
    return true;
  }

  // dst = v_0 (op) v_1 (op) ... (op) v_{p-1}; v_rank is `own`, v_q (q != rank) the q-th staged slice.
  void foldInRankOrder(Channel& c, const std::byte* own, std::byte* dst, std::size_t elems, std::size_t bytes) {
    auto value = [&](int q) -> const std::byte* {
      if (q == rank_) return own;
      return c.staging.data() + static_cast<std::size_t>(q < rank_ ? q : q - 1) * bytes;
    };
    const bool overlap = own < dst + bytes && dst < own + bytes;
    if (overlap && fold_.size() < bytes) fold_.resize(bytes);
    std::byte* acc = overlap ? fold_.data() : dst;
    std::memmove(acc, value(0), bytes);
    for (int q = 1; q < plan_.nranks; ++q) o_.reduce(acc, acc, value(q), elems);
    if (acc != dst) std::memcpy(dst, acc, bytes);
  }

  void idle(bool progress, Clock::time_point& lastProgress, const char* what) {
    const auto now = Clock::now();
    if (progress) {
      lastProgress = now;
      return;
    }
    if (now - lastProgress > o_.timeout) {
      std::string peers;
      for (int q : waitingFor_) peers += (peers.empty() ? "" : ", ") + std::to_string(q);
      throw TimeoutError(where(plan_) + ": rank " + std::to_string(rank_) + " timed out after " +
                         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(o_.timeout).count()) +
                         " ms waiting for " + what + (peers.empty() ? "" : " from rank " + peers));
    }
    if (now - lastProgress > o_.spin) sched_yield();  // oversubscribed cores: let the peer run
  }

  const World& world_;
  const plan::Plan& plan_;
  const MpiMemory& mem_;
  const MpiRunOptions& o_;
  int rank_;
  std::vector<Channel> channels_;
  std::vector<int> laneOf_;  // per plan channel: its index in channels_ (-1: no ops on this rank)
  MpiLinks sends_;  // the sends in flight
  std::vector<int> waitingFor_;
  std::vector<std::byte> fold_;
  plan::PhaseGates gates_;
};

}  // namespace

void MpiExecutor::run(const plan::Plan& plan, const MpiMemory& memory, const MpiRunOptions& options) {
  if (plan.nranks != world_.size())
    throw InvalidArgument("proc: plan for " + std::to_string(plan.nranks) + " ranks in a job of " +
                          std::to_string(world_.size()));
  if (!options.reduce && plan::reduces(plan.collective))
    throw InvalidArgument("proc: a reducing collective needs a reduce function");
  RankRun(world_, plan, memory, options).execute();
}

}  // namespace cclab::mpi
