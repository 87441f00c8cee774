#include "collectives/gpu_proc/gpu_proc_executor.h"

#include <unistd.h>

#include <set>
#include <stdexcept>
#include <string>

#include "collectives/core/error_text.h"
#include "collectives/core/errors.h"
#include "collectives/core/poll_wait.h"
#include "collectives/plan/plan.h"
#include "collectives/proc/shared_wait.h"
#include "collectives/proc/stale_sweep.h"

namespace cclab::mpi {
namespace {

using cuda::StepRef;

constexpr std::size_t kWordsPerRank = plan::kMaxChannels;
// After the last progress: busy polling for 50 µs (docs/proc.md's spin), then yielding until 2 ms, then
// sleeping 20 µs between polls (collectives/core/poll_wait.h).
constexpr PollBackoff kIdleBackoff{.spin = std::chrono::microseconds(50), .yieldUntil = std::chrono::milliseconds(2),
                                   .sleep = std::chrono::microseconds(20)};

std::uint32_t progressTarget(std::uint32_t base, std::int32_t step) {
  return base + static_cast<std::uint32_t>(step == StepRef::kStart ? 1 : step + 2);
}

}  // namespace

GpuProcExecutor::GpuProcExecutor(const World& world, int ranksPerProcess, cuda::ProcDevice& device,
                                 std::chrono::milliseconds setupTimeout)
    : world_(world), k_(ranksPerProcess), nranks_(world.size() * ranksPerProcess), device_(device), node_(world), transport_(node_) {
  if (k_ < 1 || k_ > kMaxRanksPerProcess)
    throw InvalidArgument("cuda under mpirun: ranks per process must be 1.." + std::to_string(kMaxRanksPerProcess) + ", got " +
                          std::to_string(k_));
  check(MPI_Comm_dup(world.comm(), &comm_), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  int leader = world.rank();
  check(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node_.comm()), "MPI_Allreduce (node leader)");
  // The abort word, a progress word per (rank, channel), then an arrival word per rank.
  const std::size_t words = 1 + static_cast<std::size_t>(nranks_) * (kWordsPerRank + 1);
  const std::string name = proc::segmentName(world.jobId() + "g" + std::to_string(world.node(world.rank())), leader, "prog");
  if (node_.rank() == 0) {
    proc::cleanupStaleSegments("");  // segments of earlier jobs whose processes were killed (docs/proc.md)
    control_ = proc::ShmSegment::create(name, words * sizeof(proc::SharedWord));
  }
  check(MPI_Barrier(node_.comm()), "MPI_Barrier (control segment)");
  if (node_.rank() != 0) control_ = proc::ShmSegment::attach(name, setupTimeout);
  base_.assign(static_cast<std::size_t>(nranks_) * kWordsPerRank, 0);
}

GpuProcExecutor::~GpuProcExecutor() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Barrier(node_.comm());  // no peer still reads this process's memory or segment
  for (auto& [key, p] : imports_) device_.closeImported(p);
  if (pinnedSend_) device_.releasePinned(pinnedSend_);
  if (pinnedRecv_) device_.releasePinned(pinnedRecv_);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

proc::SharedWord& GpuProcExecutor::word(int rank, int channel) const {
  auto* words = reinterpret_cast<proc::SharedWord*>(control_.data());
  return words[1 + static_cast<std::size_t>(rank) * kWordsPerRank + static_cast<std::size_t>(channel)];
}

proc::SharedWord& GpuProcExecutor::arrival(int rank) const {
  auto* words = reinterpret_cast<proc::SharedWord*>(control_.data());
  return words[1 + static_cast<std::size_t>(nranks_) * kWordsPerRank + static_cast<std::size_t>(rank)];
}

std::byte* GpuProcExecutor::peerBase(const cuda::ProcessRecord& owner, const cuda::ExportedRegion& region) {
  const auto key = std::make_pair(owner.process, region.handle);
  if (auto it = imports_.find(key); it != imports_.end()) return it->second;
  auto* p = static_cast<std::byte*>(device_.importMemory(region.handle));
  imports_.emplace(key, p);
  return p;
}

std::byte* GpuProcExecutor::growPinned(std::byte*& p, std::size_t& have, std::size_t want) {
  if (want > have) {
    if (p) device_.releasePinned(p);
    p = nullptr;
    have = 0;
    p = static_cast<std::byte*>(device_.allocatePinned(want));
    have = want;
  }
  return p;
}

void GpuProcExecutor::run(const GpuProcCall& c) {
  const cuda::LoweredPlan& lp = *c.lowered;
  const cuda::StagingPlan& sp = *c.staging;
  const int me = world_.rank();  // this process
  const int myNode = world_.node(me);
  if (lp.nranks != nranks_)
    throw InvalidArgument("cuda proc: a plan of " + std::to_string(lp.nranks) + " ranks for a job of " + std::to_string(nranks_));
  if (static_cast<int>(c.ranks.size()) != k_)
    throw InvalidArgument("cuda proc: a call needs this process's " + std::to_string(k_) + " ranks' buffers, got " +
                          std::to_string(c.ranks.size()));
  for (int i = 0; i < k_; ++i)
    if (c.ranks[static_cast<std::size_t>(i)].rank != me * k_ + i)
      throw InvalidArgument("cuda proc: process " + std::to_string(me) + " drives ranks " + std::to_string(me * k_) + ".." +
                            std::to_string(me * k_ + k_ - 1) + " in order");
  const std::size_t elem = sizeOf(c.type);
  const std::string who = "cuda proc: rank " + std::to_string(me * k_) + (k_ > 1 ? ".." + std::to_string(me * k_ + k_ - 1) : "");
  auto& abortWord = *reinterpret_cast<proc::SharedWord*>(control_.data());
  auto fail = [&](const std::string& what) {
    proc::raiseAbort(abortWord, 1);
    throw TimeoutError(who + ": " + what);
  };

  // 0. Arrival, bounded: the exchange below is an MPI collective, which has no timeout, so first wait
  // (with the call's timeout) until every rank of the node has arrived at this call, naming a late one.
  const auto call = static_cast<std::uint32_t>(sequence_ + 1);
  for (const LocalRankBuffers& lr : c.ranks) arrival(lr.rank).store(call);
  for (int r = 0; r < nranks_; ++r)
    if (processOf(r) != me && nodeOf(r) == myNode) try {
        proc::waitAtLeast(arrival(r), call, abortWord, c.timeout, std::chrono::nanoseconds(0),
                          "rank " + std::to_string(r) + " to arrive at call " + std::to_string(call));
      } catch (const TimeoutError& e) {
        fail(e.what());
      }

  // 1. The exchange: this process's ranks' buffers as IPC handles; the node's peers' opened (cached).
  cuda::ProcessRecord rec;
  rec.process = me;
  rec.pid = static_cast<int>(getpid());
  rec.node = myNode;
  rec.sequence = ++sequence_;
  rec.deviceId = device_.id();
  for (const LocalRankBuffers& lr : c.ranks) {
    rec.ranks.push_back(lr.rank);
    for (std::uint8_t b = 0; b < 3; ++b) {
      const DeviceRegion& r = lr.buffers[b];
      if (r.bytes > 0) rec.regions.push_back({lr.rank, b, cuda::ExportKind::Memory, r.handle, r.offset, r.bytes});
    }
  }
  const cuda::NodeDirectory dir = cuda::exchangeRecords(transport_, rec);
  std::vector<std::array<std::byte*, 3>> ptr(static_cast<std::size_t>(nranks_), {nullptr, nullptr, nullptr});
  std::set<std::pair<int, cuda::IpcHandle>> listed;
  for (const cuda::ProcessRecord& pr : dir.records())
    for (const cuda::ExportedRegion& g : pr.regions) {
      if (g.slot > cuda::kSlotScratch || g.rank < 0 || g.rank >= nranks_) continue;
      std::byte* base = pr.process == me ? c.ranks[static_cast<std::size_t>(g.rank % k_)].buffers[g.slot].base : peerBase(pr, g);
      if (pr.process != me) listed.insert({pr.process, g.handle});
      ptr[static_cast<std::size_t>(g.rank)][g.slot] = base + g.offset;
    }
  for (auto it = imports_.begin(); it != imports_.end();)  // mappings of allocations no longer in use
    if (!listed.contains(it->first)) {
      device_.closeImported(it->second);
      it = imports_.erase(it);
    } else {
      ++it;
    }
  auto at = [&](int rank, const plan::Range& r) {
    std::byte* b = ptr[static_cast<std::size_t>(rank)][static_cast<std::size_t>(r.buf)];
    if (!b)
      throw Error(who + ": rank " + std::to_string(rank) + " exported no " + std::string(plan::name(r.buf)) + " buffer, which the plan reads");
    return b + static_cast<std::size_t>(r.offset) * elem;
  };

  // 2. Staging: pinned memory (each local rank's part after the previous one's), receives posted up front.
  std::vector<std::size_t> sendAt(static_cast<std::size_t>(k_) + 1, 0), recvAt(static_cast<std::size_t>(k_) + 1, 0);
  for (int i = 0; i < k_; ++i) {
    const auto r = static_cast<std::size_t>(me * k_ + i);
    sendAt[static_cast<std::size_t>(i) + 1] = sendAt[static_cast<std::size_t>(i)] + sp.sendBytes[r];
    recvAt[static_cast<std::size_t>(i) + 1] = recvAt[static_cast<std::size_t>(i)] + sp.recvBytes[r];
  }
  growPinned(pinnedSend_, pinnedSendBytes_, sendAt.back());
  growPinned(pinnedRecv_, pinnedRecvBytes_, recvAt.back());
  auto sendSlot = [&](const cuda::StagedMessage& m) { return pinnedSend_ + sendAt[static_cast<std::size_t>(m.from % k_)] + m.sendOffset; };
  auto recvSlot = [&](const cuda::StagedMessage& m) { return pinnedRecv_ + recvAt[static_cast<std::size_t>(m.to % k_)] + m.recvOffset; };
  // Tag: (channel, sender's and receiver's places in their processes): MPI's order per (source, tag)
  // is then the plan's FIFO per connection (channel, from, to).
  auto tagOf = [&](const cuda::StagedMessage& m) { return (m.channel * k_ + m.from % k_) * k_ + m.to % k_; };
  std::vector<MPI_Request> recvs(sp.messages.size(), MPI_REQUEST_NULL);
  std::map<std::pair<int, int>, std::vector<int>> snapAt, postAt;  // (program, step) -> outgoing messages
  for (const LocalRankBuffers& lr : c.ranks) {
    for (int idx : sp.incoming[static_cast<std::size_t>(lr.rank)]) {
      const cuda::StagedMessage& m = sp.messages[static_cast<std::size_t>(idx)];
      check(MPI_Irecv(recvSlot(m), messageBytes(m.bytes), MPI_BYTE, processOf(m.from), tagOf(m), comm_,
                      &recvs[static_cast<std::size_t>(idx)]),
            "MPI_Irecv (staged)");
    }
    for (int idx : sp.outgoing[static_cast<std::size_t>(lr.rank)]) {
      const cuda::StagedMessage& m = sp.messages[static_cast<std::size_t>(idx)];
      snapAt[{m.ready.program, m.ready.step}].push_back(idx);
      postAt[{m.postAfter.program, m.postAfter.step}].push_back(idx);
    }
  }
  std::vector<MPI_Request> sends;
  std::size_t outgoing = 0;
  for (const LocalRankBuffers& lr : c.ranks) outgoing += sp.outgoing[static_cast<std::size_t>(lr.rank)].size();
  auto afterStep = [&](int program, std::int32_t step) {
    if (auto it = snapAt.find({program, step}); it != snapAt.end())
      for (int idx : it->second) {  // the sent range holds its data now: copy it out
        const cuda::StagedMessage& m = sp.messages[static_cast<std::size_t>(idx)];
        device_.copy(sendSlot(m), at(m.from, m.src), m.bytes);
      }
    if (auto it = postAt.find({program, step}); it != postAt.end())
      for (int idx : it->second) {  // in sequence per connection
        const cuda::StagedMessage& m = sp.messages[static_cast<std::size_t>(idx)];
        sends.push_back(MPI_REQUEST_NULL);
        check(MPI_Isend(sendSlot(m), messageBytes(m.bytes), MPI_BYTE, processOf(m.to), tagOf(m), comm_, &sends.back()),
              "MPI_Isend (staged)");
        ++stagedSent_;
        stagedBytes_ += static_cast<long long>(m.bytes);
      }
  };
  auto pumpSends = [&] {  // OpenMPI moves a message only while its sender calls MPI
    int flag = 1;
    if (!sends.empty())
      check(MPI_Testall(static_cast<int>(sends.size()), sends.data(), &flag, MPI_STATUSES_IGNORE), "MPI_Testall (staged sends)");
    return flag != 0;
  };

  // 3. This process's programs advance side by side (a program of one rank may wait for another
  // rank's, of this process or not); progress words tell the node.
  auto baseOf = [&](int rank, int channel) -> std::uint32_t& {
    return base_[static_cast<std::size_t>(rank) * kWordsPerRank + static_cast<std::size_t>(channel)];
  };
  std::string blockedOn;  // what the last blocked check waited for (a timeout's message)
  auto done = [&](const StepRef& w) {  // without waiting
    const cuda::RankProgram& wp = lp.programs[static_cast<std::size_t>(w.program)];
    if (nodeOf(wp.rank) != myNode) return true;  // another node: its staged message orders it
    if (proc::reached(word(wp.rank, wp.channel).value.load(std::memory_order_acquire),
                      progressTarget(baseOf(wp.rank, wp.channel), w.step)))
      return true;
    blockedOn = "rank " + std::to_string(wp.rank) + " (channel " + std::to_string(wp.channel) + ", " +
                (w.step == StepRef::kStart ? std::string("start") : "step " + std::to_string(w.step)) + ")";
    return false;
  };
  struct Cursor {
    int program;
    std::int32_t next = 0;
  };
  std::vector<Cursor> cursors;
  for (const LocalRankBuffers& lr : c.ranks) {
    const auto mine = lp.programsOf(lr.rank);
    const int first = lp.firstProgram[static_cast<std::size_t>(lr.rank)];
    for (const cuda::RankProgram& prog : mine) {
      const int q = first + static_cast<int>(&prog - mine.data());
      cursors.push_back({q});
      word(lr.rank, prog.channel).store(progressTarget(baseOf(lr.rank, prog.channel), StepRef::kStart));
    }
  }
  for (const Cursor& cur : cursors) afterStep(cur.program, StepRef::kStart);
  IdlePoll idlePoll(kIdleBackoff, c.timeout);  // the timeout counts only time this process ran
  auto idle = [&](const std::string& what) {
    pumpSends();
    if (abortWord.value.load(std::memory_order_acquire) != 0) fail("aborted by a peer while waiting for " + what);
    if (!idlePoll.idle()) fail("timed out after " + millisecondsText(c.timeout) + " waiting for " + what);
  };
  for (;;) {
    bool progress = false, finished = true;
    for (Cursor& cur : cursors) {
      const cuda::RankProgram& prog = lp.programs[static_cast<std::size_t>(cur.program)];
      while (cur.next < static_cast<std::int32_t>(prog.steps.size())) {
        const cuda::Step& s = prog.steps[static_cast<std::size_t>(cur.next)];
        bool ready = true;
        for (const StepRef& w : s.waits) ready = ready && done(w);
        const int m = sp.messageOf({cur.program, cur.next});
        if (ready && m >= 0) {
          int flag = 0;
          check(MPI_Test(&recvs[static_cast<std::size_t>(m)], &flag, MPI_STATUS_IGNORE), "MPI_Test (staged)");
          const cuda::StagedMessage& msg = sp.messages[static_cast<std::size_t>(m)];
          if (!flag)
            blockedOn = "staged data from rank " + std::to_string(msg.from) + " (channel " + std::to_string(msg.channel) +
                        ", message " + std::to_string(msg.sequence) + ")";
          ready = flag != 0;
        }
        if (!ready) break;
        const void* src = m >= 0 ? static_cast<const void*>(recvSlot(sp.messages[static_cast<std::size_t>(m)])) : at(s.srcRank, s.src);
        device_.reduceCopy(c.type, c.op, at(prog.rank, s.dst), s.kind == cuda::StepKind::Reduce ? at(prog.rank, s.local) : nullptr,
                           src, s.count());
        word(prog.rank, prog.channel).store(progressTarget(baseOf(prog.rank, prog.channel), cur.next));
        afterStep(cur.program, cur.next);
        ++cur.next;
        progress = true;
      }
      finished = finished && cur.next == static_cast<std::int32_t>(prog.steps.size());
    }
    if (finished) break;
    if (progress) {
      idlePoll.progress();
      pumpSends();
    } else {
      idle(blockedOn + " at " + std::to_string(cursors.size()) + " programs");
    }
  }
  idlePoll.progress();
  for (const Cursor& cur : cursors)  // final waits: readers of this process's last sends on the node
    for (const StepRef& w : lp.programs[static_cast<std::size_t>(cur.program)].finalWaits)
      while (!done(w)) idle(blockedOn + " to read its last sends");
  idlePoll.progress();
  while (!pumpSends()) idle("its staged sends to be received (" + std::to_string(sends.size()) + " of " + std::to_string(outgoing) + ")");
  for (const cuda::RankProgram& prog : lp.programs) baseOf(prog.rank, prog.channel) += static_cast<std::uint32_t>(prog.steps.size()) + 1;
}

}  // namespace cclab::mpi
