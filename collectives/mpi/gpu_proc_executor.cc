#include "collectives/mpi/gpu_proc_executor.h"

#include <sched.h>
#include <unistd.h>

#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "collectives/core/errors.h"
#include "collectives/plan/plan.h"
#include "collectives/proc/shared_wait.h"
#include "collectives/proc/stale_sweep.h"

namespace cclab::mpi {
namespace {

using Clock = std::chrono::steady_clock;
using cuda::StepRef;

constexpr std::size_t kWordsPerRank = plan::kMaxChannels;
constexpr auto kSpinWithCores = std::chrono::microseconds(50);  // the host backend's spin (docs/proc.md)
constexpr auto kPumpEvery = std::chrono::milliseconds(1);       // MPI progress while sends are in flight

std::uint32_t progressTarget(std::uint32_t base, std::int32_t step) {
  return base + static_cast<std::uint32_t>(step == StepRef::kStart ? 1 : step + 2);
}

}  // namespace

GpuProcExecutor::GpuProcExecutor(const World& world, cuda::ProcDevice& device, std::chrono::milliseconds setupTimeout)
    : world_(world), device_(device), node_(world), transport_(node_) {
  check(MPI_Comm_dup(world.comm(), &comm_), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  int leader = world.rank();
  check(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node_.comm()), "MPI_Allreduce (node leader)");
  // The abort word, a progress word per (rank, channel), then an arrival word per rank.
  const std::size_t words = 1 + static_cast<std::size_t>(world.size()) * (kWordsPerRank + 1);
  const std::string name = proc::segmentName(world.jobId() + "g" + std::to_string(world.node(world.rank())), leader, "prog");
  if (node_.rank() == 0) {
    proc::cleanupStaleSegments("");  // segments of earlier jobs whose processes were killed (docs/proc.md)
    control_ = proc::ShmSegment::create(name, words * sizeof(proc::SharedWord));
  }
  check(MPI_Barrier(node_.comm()), "MPI_Barrier (control segment)");
  if (node_.rank() != 0) control_ = proc::ShmSegment::attach(name, setupTimeout);
  base_.assign(static_cast<std::size_t>(world.size()) * kWordsPerRank, 0);
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
  return words[1 + static_cast<std::size_t>(world_.size()) * kWordsPerRank + static_cast<std::size_t>(rank)];
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
  const int me = world_.rank();
  const int myNode = world_.node(me);
  if (lp.nranks != world_.size())
    throw InvalidArgument("cuda proc: a plan of " + std::to_string(lp.nranks) + " ranks for a job of " + std::to_string(world_.size()));
  const std::size_t elem = sizeOf(c.type);
  const std::string who = "cuda proc: rank " + std::to_string(me);

  // 0. Arrival, bounded: the exchange below is an MPI collective, which has no timeout, so first wait
  // (with the call's timeout) until every rank of the node has arrived at this call, naming a late one.
  auto& abortWord = *reinterpret_cast<proc::SharedWord*>(control_.data());
  const auto call = static_cast<std::uint32_t>(sequence_ + 1);
  arrival(me).store(call);
  for (int r = 0; r < world_.size(); ++r)
    if (r != me && world_.node(r) == myNode)
      try {
        proc::waitAtLeast(arrival(r), call, abortWord, c.timeout, std::chrono::nanoseconds(0),
                          "rank " + std::to_string(r) + " to arrive at call " + std::to_string(call));
      } catch (const TimeoutError& e) {
        proc::raiseAbort(abortWord, 1);
        throw TimeoutError(who + ": " + e.what());
      }

  // 1. The exchange: this rank's buffers as IPC handles; the node's peers' opened (cached).
  cuda::ProcessRecord rec;
  rec.process = me;
  rec.pid = static_cast<int>(getpid());
  rec.node = myNode;
  rec.sequence = ++sequence_;
  rec.deviceId = device_.id();
  rec.ranks = {me};
  for (std::uint8_t b = 0; b < 3; ++b) {
    const DeviceRegion& r = c.buffers[b];
    if (r.bytes > 0) rec.regions.push_back({me, b, cuda::ExportKind::Memory, r.handle, r.offset, r.bytes});
  }
  const cuda::NodeDirectory dir = cuda::exchangeRecords(transport_, rec);
  std::vector<std::array<std::byte*, 3>> ptr(static_cast<std::size_t>(world_.size()), {nullptr, nullptr, nullptr});
  std::set<std::pair<int, cuda::IpcHandle>> listed;
  for (const cuda::ProcessRecord& pr : dir.records())
    for (const cuda::ExportedRegion& g : pr.regions) {
      if (g.slot > cuda::kSlotScratch) continue;
      std::byte* base = pr.process == me ? c.buffers[g.slot].base : peerBase(pr, g);
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

  // 2. Staging: pinned memory, every receive posted up front.
  const auto meIdx = static_cast<std::size_t>(me);
  growPinned(pinnedSend_, pinnedSendBytes_, sp.sendBytes[meIdx]);
  growPinned(pinnedRecv_, pinnedRecvBytes_, sp.recvBytes[meIdx]);
  std::vector<MPI_Request> recvs(sp.messages.size(), MPI_REQUEST_NULL);
  for (int idx : sp.incoming[meIdx]) {
    const cuda::StagedMessage& m = sp.messages[static_cast<std::size_t>(idx)];
    check(MPI_Irecv(pinnedRecv_ + m.recvOffset, messageBytes(m.bytes), MPI_BYTE, m.from, m.channel, comm_,
                    &recvs[static_cast<std::size_t>(idx)]),
          "MPI_Irecv (staged)");
  }
  std::map<std::pair<int, int>, std::vector<int>> snapAt, postAt;  // (program, step) -> outgoing messages
  for (int idx : sp.outgoing[meIdx]) {
    const cuda::StagedMessage& m = sp.messages[static_cast<std::size_t>(idx)];
    snapAt[{m.ready.program, m.ready.step}].push_back(idx);
    postAt[{m.postAfter.program, m.postAfter.step}].push_back(idx);
  }
  std::vector<MPI_Request> sends;
  auto afterStep = [&](int program, std::int32_t step) {
    if (auto it = snapAt.find({program, step}); it != snapAt.end())
      for (int idx : it->second) {  // the sent range holds its data now: copy it out
        const cuda::StagedMessage& m = sp.messages[static_cast<std::size_t>(idx)];
        device_.copy(pinnedSend_ + m.sendOffset, at(me, m.src), m.bytes);
      }
    if (auto it = postAt.find({program, step}); it != postAt.end())
      for (int idx : it->second) {  // in sequence per connection
        const cuda::StagedMessage& m = sp.messages[static_cast<std::size_t>(idx)];
        sends.push_back(MPI_REQUEST_NULL);
        check(MPI_Isend(pinnedSend_ + m.sendOffset, messageBytes(m.bytes), MPI_BYTE, m.to, m.channel, comm_, &sends.back()),
              "MPI_Isend (staged)");
        ++stagedSent_;
        stagedBytes_ += static_cast<long long>(m.bytes);
      }
  };
  auto pumpSends = [&] {
    int flag = 0;
    check(MPI_Testall(static_cast<int>(sends.size()), sends.data(), &flag, MPI_STATUSES_IGNORE), "MPI_Testall (staged sends)");
    return flag != 0;
  };
  auto pollUntil = [&](auto done, const std::string& what) {
    const auto deadline = Clock::now() + c.timeout;
    while (!done()) {
      if (Clock::now() > deadline)
        throw TimeoutError(who + ": timed out after " + std::to_string(c.timeout.count()) + " ms waiting for " + what);
      sched_yield();
    }
  };

  // 3. This rank's programs, one after the other; progress words tell the node's peers.
  const auto spin = node_.size() <= static_cast<int>(std::max(1U, std::thread::hardware_concurrency()))
                        ? std::chrono::nanoseconds(kSpinWithCores)
                        : std::chrono::nanoseconds(0);
  auto baseOf = [&](int rank, int channel) -> std::uint32_t& {
    return base_[static_cast<std::size_t>(rank) * kWordsPerRank + static_cast<std::size_t>(channel)];
  };
  auto waitFor = [&](const StepRef& w) {
    const cuda::RankProgram& wp = lp.programs[static_cast<std::size_t>(w.program)];
    if (wp.rank == me || world_.node(wp.rank) != myNode) return;  // another node: the staged message orders it
    const std::string what = "rank " + std::to_string(wp.rank) + " (channel " + std::to_string(wp.channel) + ", " +
                             (w.step == StepRef::kStart ? std::string("start") : "step " + std::to_string(w.step)) + ")";
    const proc::SharedWord& wd = word(wp.rank, wp.channel);
    const std::uint32_t target = progressTarget(baseOf(wp.rank, wp.channel), w.step);
    if (sends.empty()) {  // nothing of ours in flight: the futex wait may sleep
      proc::waitAtLeast(wd, target, abortWord, c.timeout, spin, what);
      return;
    }
    // Sends in flight need this process to call MPI for them to progress (a peer's receive, and so
    // everything that waits on it, may depend on them): wait in short slices and pump MPI between.
    const auto deadline = Clock::now() + c.timeout;
    for (auto slice = spin;; slice = std::chrono::nanoseconds(0)) {
      const auto until = std::min(deadline, Clock::now() + kPumpEvery);
      const proc::WaitResult res =
          proc::waitUntil(wd, [target](std::uint32_t v) { return proc::reached(v, target); }, abortWord, until, slice);
      if (res == proc::WaitResult::Ready) return;
      if (res == proc::WaitResult::Aborted) throw TimeoutError(who + ": aborted by a peer while waiting for " + what);
      pumpSends();
      if (Clock::now() >= deadline)
        throw TimeoutError(who + ": timed out after " + std::to_string(c.timeout.count()) + " ms waiting for " + what);
    }
  };
  const auto mine = lp.programsOf(me);
  const int first = lp.firstProgram[meIdx];
  for (const cuda::RankProgram& prog : mine) {
    word(me, prog.channel).store(progressTarget(baseOf(me, prog.channel), StepRef::kStart));
    afterStep(first + static_cast<int>(&prog - mine.data()), StepRef::kStart);
  }
  std::string at_ = "start";  // where this rank is, for a timeout's message
  try {
    for (const cuda::RankProgram& prog : mine) {
      const int q = first + static_cast<int>(&prog - mine.data());
      for (std::int32_t i = 0; i < static_cast<std::int32_t>(prog.steps.size()); ++i) {
        const cuda::Step& s = prog.steps[static_cast<std::size_t>(i)];
        at_ = "channel " + std::to_string(prog.channel) + " step " + std::to_string(i);
        for (const StepRef& w : s.waits) waitFor(w);
        const void* src = nullptr;
        if (const int m = sp.messageOf({q, i}); m >= 0) {
          const cuda::StagedMessage& msg = sp.messages[static_cast<std::size_t>(m)];
          MPI_Request& r = recvs[static_cast<std::size_t>(m)];
          pollUntil([&] { int flag = 0; check(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), "MPI_Test (staged)"); return flag != 0; },
                    "staged data from rank " + std::to_string(msg.from) + " (channel " + std::to_string(msg.channel) +
                        ", message " + std::to_string(msg.sequence) + ")");
          src = pinnedRecv_ + msg.recvOffset;
        } else {
          src = at(s.srcRank, s.src);
        }
        device_.reduceCopy(c.type, c.op, at(me, s.dst), s.kind == cuda::StepKind::Reduce ? at(me, s.local) : nullptr, src, s.count());
        word(me, prog.channel).store(progressTarget(baseOf(me, prog.channel), i));
        afterStep(q, i);
      }
    }
    for (const cuda::RankProgram& prog : mine)
      for (const StepRef& w : prog.finalWaits) waitFor(w);
    pollUntil(pumpSends, "its staged sends to be received");
  } catch (const TimeoutError& e) {
    proc::raiseAbort(abortWord, 1);
    throw TimeoutError(std::string(e.what()) + " at " + at_ + ", " + std::to_string(sends.size()) + " of " +
                       std::to_string(sp.outgoing[meIdx].size()) + " staged sends posted");
  } catch (...) {
    proc::raiseAbort(abortWord, 1);
    throw;
  }
  for (const cuda::RankProgram& prog : lp.programs) baseOf(prog.rank, prog.channel) += static_cast<std::uint32_t>(prog.steps.size()) + 1;
}

}  // namespace cclab::mpi
