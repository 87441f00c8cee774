// ShmExecutor: the host executor's single-copy channels with offsets instead of pointers, over shared
// segments, and cross-process waits; a transport of the executor core (plan::PlanRunner).
// A plan of several channels runs them one after the other (SliceCursor over plan::sequentialOps: as
// listed, channel by channel, or phase by phase when the plan has phase deps, which that order honours)
// over one connection per ordered pair: every rank walks the same order, so the k-th message on a pair
// is still the one the plan pairs it with (plan.h), and a channel never waits on a later one.
#include "collectives/proc/shm_executor.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/core/pause_clock.h"
#include "collectives/host/rank_memory.h"
#include "collectives/plan/plan_runner.h"
#include "collectives/proc/stale_sweep.h"

namespace cclab::proc {
namespace {

// Control segment layout: Control, then RankInfo[nranks], then channels[nranks * nranks].

// "rank 2" / "ranks 1, 3" / "ranks 0, 1, ... and 5 more".
std::string rankList(const std::vector<int>& ranks) {
  constexpr std::size_t kMaxNamed = 8;  // a message stays one readable line
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size() && i < kMaxNamed; ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > kMaxNamed) text += " and " + std::to_string(ranks.size() - kMaxNamed) + " more";
  return text;
}

// Whether `pid` is stopped (SIGSTOP, a debugger): state T or t in /proc/<pid>/stat.
bool processStopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (pid <= 0 || !in || !std::getline(in, text)) return false;
  const auto close = text.rfind(')');  // "pid (comm) state ...": comm may hold spaces and ')'
  return close != std::string::npos && close + 2 < text.size() && (text[close + 2] == 'T' || text[close + 2] == 't');
}

std::string milliseconds(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

}  // namespace

namespace {
NodeRanks wholeJob(int nranks) {
  NodeRanks n;
  for (int r = 0; r < nranks; ++r) n.ranks.push_back(r);
  n.jobRanks = nranks;
  return n;
}
}  // namespace

ShmExecutor::ShmExecutor(const std::string& job, int rank, int nranks, std::size_t bufferBytes,
                         std::chrono::nanoseconds timeout)
    : ShmExecutor(job, rank, wholeJob(std::max(nranks, 0)), bufferBytes, timeout, nullptr) {}

ShmExecutor::ShmExecutor(const std::string& job, int globalRank, const NodeRanks& node, std::size_t bufferBytes,
                         std::chrono::nanoseconds timeout, RemoteLinks* remote)
    : rank_(-1), nranks_(static_cast<int>(node.ranks.size())), jobRanks_(node.jobRanks), global_(node.ranks), remote_(remote) {
  const int nranks = nranks_;
  if (nranks < 1 || nranks > kMaxRanks)
    throw InvalidArgument("proc: nranks " + std::to_string(nranks) + " outside [1, " + std::to_string(kMaxRanks) + "]");
  if (jobRanks_ < nranks) throw InvalidArgument("proc: a node of " + std::to_string(nranks) + " ranks in a job of " + std::to_string(jobRanks_));
  local_.assign(static_cast<std::size_t>(jobRanks_), -1);
  for (int i = 0; i < nranks; ++i) {
    const int g = global_[static_cast<std::size_t>(i)];
    if (g < 0 || g >= jobRanks_ || (i > 0 && g <= global_[static_cast<std::size_t>(i) - 1]))
      throw InvalidArgument("proc: the node's ranks must be ascending ranks of the job");
    local_[static_cast<std::size_t>(g)] = i;
    if (g == globalRank) rank_ = i;
  }
  if (rank_ < 0) throw InvalidArgument("proc: rank " + std::to_string(globalRank) + " out of range");
  if (nranks < jobRanks_ && remote_ == nullptr) throw InvalidArgument("proc: ranks off the node need remote links");
  const int rank = rank_;
  const auto n = static_cast<std::size_t>(nranks);
  llRingLines_ = nranks == jobRanks_ ? shmLlRingLines(nranks) : 0;  // LL only when the node is the whole job
  llOffset_ = sizeof(Control) + sizeof(RankInfo) * n + sizeof(Channel) * n * n;
  const std::size_t llBytes = llRingLines_ > 0 ? n * n * (sizeof(LlWords) + static_cast<std::size_t>(llRingLines_) * sizeof(LlLine)) : 0;
  const std::size_t ctrlBytes = llOffset_ + llBytes;
  const std::string ctrlName = segmentName(job, 0, "ctrl");
  const auto deadline = Clock::now() + timeout;  // one bound for joining, however many peers
  const auto left = [deadline] { return std::max<std::chrono::nanoseconds>(deadline - Clock::now(), {}); };
  ctrl_ = rank == 0 ? ShmSegment::create(ctrlName, ctrlBytes) : ShmSegment::attach(ctrlName, left());
  if (ctrl_.size() != ctrlBytes)
    throw InvalidArgument("proc: control segment '" + ctrlName + "' is for another number of ranks");
  if (llRingLines_ > 0) {
    for (int r = 0; r < nranks; ++r) {
      llTo_.emplace_back(llRing(rank, r), &llWords(rank, r).bell, &llWords(rank, r).acked);
      llFrom_.emplace_back(llRing(r, rank), &llWords(r, rank).bell, &llWords(r, rank).acked);
    }
  }
  info(rank).startTime.store(processStartTime(getpid()), std::memory_order_relaxed);
  info(rank).pid.store(getpid(), std::memory_order_release);
  own_ = ShmSegment::create(segmentName(job, rank, "buf"), bufferBytes);
  peers_.resize(n);
  bases_.assign(n, nullptr);
  bases_[static_cast<std::size_t>(rank)] = own_.data();
  for (int r = 0; r < nranks; ++r) {
    if (r == rank) continue;
    auto& seg = peers_[static_cast<std::size_t>(r)];
    seg = ShmSegment::attach(segmentName(job, r, "buf"), left());
    if (seg.size() != bufferBytes)
      throw InvalidArgument("proc: rank " + std::to_string(r) + "'s buffer segment has " + std::to_string(seg.size()) +
                            " bytes, this rank " + std::to_string(bufferBytes));
    bases_[static_cast<std::size_t>(r)] = seg.data();
  }
  joinAndUnlink(deadline);
}

void ShmExecutor::joinAndUnlink(Clock::time_point deadline) {
  SharedWord& joined = control().joined;
  joined.value.fetch_add(1, std::memory_order_acq_rel);
  joined.wakeAll();
  const auto n = static_cast<std::uint32_t>(nranks_);
  const auto r = waitUntil(joined, [n](std::uint32_t v) { return v >= n; }, control().abort, deadline,
                           std::chrono::microseconds(50));
  if (r != WaitResult::Ready) {
    std::vector<int> absent;
    for (int i = 0; i < nranks_; ++i)
      if (info(i).pid.load(std::memory_order_acquire) == 0) absent.push_back(globalOf(i));
    throw TimeoutError("proc: rank " + std::to_string(rank()) + " joined, but " +
                       (absent.empty() ? std::string("not every rank of the node attached") : rankList(absent) + " never joined") +
                       (r == WaitResult::Aborted ? " (the job was aborted)" : ""));
  }
  own_.unlinkName();
  ctrl_.unlinkName();  // a no-op except on rank 0, its creator
}

std::int64_t shmLlRingLines(int nodeRanks) {
  const std::int64_t lines = llAffordableLines(nodeRanks, kShmLlBudgetBytes);
  return lines < kShmLlMinRingLines ? 0 : std::min(lines, kShmLlMaxRingLines);
}

ShmExecutor::LlWords& ShmExecutor::llWords(int from, int to) const {
  auto* words = reinterpret_cast<LlWords*>(ctrl_.data() + llOffset_);
  return words[static_cast<std::size_t>(from) * static_cast<std::size_t>(nranks_) + static_cast<std::size_t>(to)];
}

LlRing ShmExecutor::llRing(int from, int to) const {
  const auto n = static_cast<std::size_t>(nranks_);
  auto* lines = reinterpret_cast<LlLine*>(ctrl_.data() + llOffset_ + n * n * sizeof(LlWords));
  const std::size_t pair = static_cast<std::size_t>(from) * n + static_cast<std::size_t>(to);
  return LlRing(lines + pair * static_cast<std::size_t>(llRingLines_), llRingLines_, kLlMaxFlagPeriod);
}

ShmExecutor::RankInfo& ShmExecutor::info(int r) const {
  return reinterpret_cast<RankInfo*>(ctrl_.data() + sizeof(Control))[r];
}

bool ShmExecutor::alive(int r) const {
  const RankInfo& i = info(r);
  const pid_t pid = i.pid.load(std::memory_order_acquire);
  return pid == 0 || creatorAlive(pid, i.startTime.load(std::memory_order_relaxed));
}

ShmExecutor::Channel& ShmExecutor::channel(int from, int to) const {
  auto* channels = reinterpret_cast<Channel*>(ctrl_.data() + sizeof(Control) + sizeof(RankInfo) * static_cast<std::size_t>(nranks_));
  return channels[static_cast<std::size_t>(from) * static_cast<std::size_t>(nranks_) + static_cast<std::size_t>(to)];
}

void ShmExecutor::fail(const std::vector<int>& lost) {
  for (int r : lost) control().lost[r / 32].fetch_or(1U << (r % 32), std::memory_order_seq_cst);
  std::uint32_t expected = 0;
  control().abort.value.compare_exchange_strong(expected, static_cast<std::uint32_t>(rank_) + 1);
  control().abort.wakeAll();
  for (int a = 0; a < nranks_; ++a)
    for (int b = 0; b < nranks_; ++b) {
      channel(a, b).posted.wakeAll();
      channel(a, b).consumed.wakeAll();
      if (llRingLines_ > 0) {
        llWords(a, b).acked.wakeAll();
        llWords(a, b).bell.wakeAll();
      }
    }
}

void ShmExecutor::abort() { fail({}); }

std::vector<int> ShmExecutor::globalOf(const std::vector<int>& locals) const {
  std::vector<int> out;
  for (int l : locals) out.push_back(globalOf(l));
  return out;
}

std::vector<int> ShmExecutor::lostRanks() const {
  std::vector<int> lost;
  for (int r = 0; r < nranks_; ++r)
    if (control().lost[r / 32].load(std::memory_order_acquire) & (1U << (r % 32))) lost.push_back(r);
  return lost;
}

std::vector<int> ShmExecutor::othersLost() const {
  std::vector<int> lost = lostRanks();
  std::erase(lost, rank_);
  return lost;
}

ShmExecutor::Culprit ShmExecutor::culprit(int peer) const {
  std::vector<bool> seen(static_cast<std::size_t>(nranks_), false);
  seen[static_cast<std::size_t>(rank_)] = true;
  for (int at = peer;;) {
    seen[static_cast<std::size_t>(at)] = true;
    if (processStopped(info(at).pid.load(std::memory_order_acquire))) return {globalOf(at), false};
    const std::int32_t code = info(at).waitingFor.load(std::memory_order_acquire);
    if (code == kWaitsOffNode) return {globalOf(at), true};
    if (code <= 0 || code > jobRanks_) return {globalOf(at), false};  // waits for nobody: it is late
    const int next = localOf(code - 1);
    if (next < 0) return {code - 1, true};
    if (seen[static_cast<std::size_t>(next)]) return {globalOf(peer), false};  // a cycle: no better guess than the peer
    at = next;
  }
}

std::vector<int> ShmExecutor::lateRanks(std::uint32_t call) const {
  std::vector<int> late;
  for (int r = 0; r < nranks_; ++r)
    if (!reached(arrived(r).value.load(std::memory_order_acquire), call)) late.push_back(r);
  return late;
}

std::string ShmExecutor::head(const WaitSite& site) const {
  return "proc " + std::string(plan::name(site.plan->collective)) + "/" + std::string(plan::name(site.plan->algorithm)) +
         ": rank " + std::to_string(globalOf(rank_));
}

std::string ShmExecutor::tail(const WaitSite& site, int peer, const char* what) const {
  return " at op " + std::to_string(site.opIndex) + " waiting for " + what + " rank " + std::to_string(globalOf(peer));
}

void ShmExecutor::waitReady(const SharedWord& word, const std::function<bool(std::uint32_t)>& ready, int peer,
                            const char* what, const WaitSite& site, std::chrono::nanoseconds timeout,
                            std::chrono::nanoseconds spin) {
  const Waiting waiting(*this, globalOf(peer) + 1);
  PauseClock clock;  // counts only time this rank ran: a job stopped as a whole resumes (pause_clock.h)
  auto deadline = Clock::now() + timeout;
  bool graced = false;  // the deadline was moved by remoteGrace once
  auto livenessAt = Clock::now() + kLivenessCheck;
  for (;;) {  // in rounds of kLivenessCheck, checking between them that the peer still runs
    // Sends to other nodes still in flight: shorter rounds, moving them along between rounds.
    const bool sending = remote_ != nullptr && remote_->progress();
    const auto roundEnd = std::min({deadline, livenessAt, sending ? Clock::now() + kProgressRound : livenessAt});
    const auto r = waitUntil(word, ready, control().abort, roundEnd, spin);
    spin = std::chrono::nanoseconds(0);  // the busy phase once per wait, not once per round
    if (r == WaitResult::Ready) return;
    if (r == WaitResult::Aborted) break;
    const auto now = clock.now();
    if (now >= deadline) {
      // The chain of waits leaves the node: the ranks there see further, give them time to report.
      if (graced || !lateRanks(site.call).empty() || !culprit(peer).offNode) break;
      graced = true;
      deadline = now + remoteGrace(timeout);
      continue;
    }
    if (now < livenessAt) continue;
    livenessAt = now + kLivenessCheck;
    if (!alive(peer)) {
      fail({peer});
      throw TimeoutError(head(site) + " lost rank " + std::to_string(globalOf(peer)) + ": its process (pid " +
                         std::to_string(info(peer).pid.load()) + ") died" + tail(site, peer, what));
    }
  }
  if (control().abort.value.load(std::memory_order_acquire) == 0) {
    // Timed out. Blame the ranks that never started this call when there are any, else the end of the
    // chain of waits from the peer (the peer itself unless it waits for another rank).
    const std::vector<int> late = lateRanks(site.call);
    if (!late.empty()) {
      fail(late);
      throw TimeoutError(head(site) + " lost " + rankList(globalOf(late)) + ": timed out after " + milliseconds(timeout) +
                         tail(site, peer, what) + " (never arrived)");
    }
    const Culprit c = culprit(peer);
    const int local = localOf(c.global);
    fail(local >= 0 ? std::vector<int>{local} : std::vector<int>{});
    throw TimeoutError(head(site) + " lost rank " + std::to_string(c.global) + ": timed out after " +
                       milliseconds(graced ? timeout + remoteGrace(timeout) : timeout) + tail(site, peer, what) +
                       (c.global == globalOf(peer) ? "" : c.offNode ? " (which waits for it on another node)" : " (which waits for it)"));
  }
  const std::uint32_t code = control().abort.value.load(std::memory_order_acquire);
  const std::vector<int> lost = othersLost();
  throw TimeoutError(head(site) + (lost.empty() ? " stopped" : " lost " + rankList(globalOf(lost))) + ": stopped by rank " +
                     std::to_string(globalOf(static_cast<int>(code) - 1)) + tail(site, peer, what));
}

void ShmExecutor::throwIfAborted(const plan::Plan& plan) const {
  const std::uint32_t code = control().abort.value.load(std::memory_order_acquire);
  if (code == 0) return;
  // Already aborted (by this rank in an earlier call, or by a peer before this rank got here): the
  // same one line as the ranks that were waiting, naming the lost ranks.
  const std::vector<int> lost = othersLost();
  throw TimeoutError("proc " + std::string(plan::name(plan.collective)) + "/" + std::string(plan::name(plan.algorithm)) +
                     ": rank " + std::to_string(globalOf(rank_)) + (lost.empty() ? " stopped" : " lost " + rankList(globalOf(lost))) +
                     ": stopped by rank " + std::to_string(globalOf(static_cast<int>(code) - 1)) + " before this call");
}

std::uint32_t ShmExecutor::arrive() {
  SharedWord& a = arrived(rank_);  // only this rank writes it
  const std::uint32_t call = a.value.load(std::memory_order_relaxed) + 1;
  a.value.store(call, std::memory_order_release);
  return call;
}

// The shared-memory slot transport (plan_runner.h) of this rank during one run(): its outstanding
// sends and its waits. One sequential lane; every call waits (bounded) until it can proceed
// (plan::WaitingTransport), and a write or the end waits for the reads of what was sent from there.
class ShmExecutor::RankRun : public plan::WaitingTransport {
 public:
  RankRun(ShmExecutor& ex, const plan::Plan& plan, const ShmLayout& layout, const ShmRunOptions& o, std::uint32_t call)
      : ex_(ex), plan_(plan), layout_(layout), o_(o), call_(call) {}

  void execute() {
    plan::PlanRunner<RankRun>(*this, ex_.slotRunner_, plan_, ex_.globalOf(ex_.rank_), {o_.elemSize, o_.reduce, o_.sliceElems, false})
        .run();
  }

  std::byte* address(const plan::Range& r, std::int64_t lo) const {
    return host::RankMemory{base() + layout_.input, base() + layout_.output, base() + layout_.scratch}.at(r, lo, o_.elemSize);
  }

  // The peer is a rank of the job: on this node through the shared connection, else through the links.
  bool trySend(Lane& lane, const plan::Op& op, const std::byte* src, std::size_t bytes) {
    opIndex_ = lane.opIndex();
    const int peer = ex_.localOf(op.peer);
    if (peer < 0) {
      ex_.remote_->send(op.peer, op.channel, src, bytes);
      return true;
    }
    Channel& ch = ex_.channel(ex_.rank_, peer);
    const std::uint32_t seq = ch.posted.value.load(std::memory_order_relaxed);  // only this rank writes it
    waitFor(ch.consumed, seq - kSlots + 1, peer, "a free slot to");
    const auto offset = static_cast<std::size_t>(src - base());
    ch.slots[seq % kSlots] = offset;
    ch.posted.store(seq + 1);
    if (pending_.size() >= 4 * kSlots)
      std::erase_if(pending_, [](const Pending& p) {
        return reached(p.channel->consumed.value.load(std::memory_order_acquire), p.seq);
      });
    pending_.push_back({offset, offset + bytes, &ch, peer, seq + 1});
    return true;
  }

  // From a peer on this node: its segment as mapped here, once posted; from a peer off the node:
  // received through the links into `into` (a Recv's dst) or a buffer of the rank's own.
  const std::byte* tryReceive(Lane& lane, const plan::Op& op, int globalPeer, std::byte* into, std::size_t bytes, int index) {
    opIndex_ = lane.opIndex();
    const int peer = ex_.localOf(globalPeer);
    if (peer < 0) {
      if (!into) {
        if (remoteValues_.size() <= static_cast<std::size_t>(index)) remoteValues_.resize(static_cast<std::size_t>(index) + 1);
        auto& v = remoteValues_[static_cast<std::size_t>(index)];
        if (v.size() < bytes) v.resize(bytes);
        into = v.data();
      }
      remoteReceive(globalPeer, op.channel, into, bytes);
      return into;
    }
    const Channel& ch = ex_.channel(peer, ex_.rank_);
    const std::uint32_t seq = ch.consumed.value.load(std::memory_order_relaxed);  // only this rank writes it
    waitFor(ch.posted, seq + 1, peer, "data from");
    return ex_.bases_[static_cast<std::size_t>(peer)] + ch.slots[seq % kSlots];
  }

  void release(Lane&, const plan::Op&, int globalPeer) {
    const int peer = ex_.localOf(globalPeer);
    if (peer < 0) return;
    Channel& ch = ex_.channel(peer, ex_.rank_);
    ch.consumed.store(ch.consumed.value.load(std::memory_order_relaxed) + 1);
  }

  // Before writing [dst, dst+bytes): every slice this rank sent from there must have been read.
  bool writable(Lane& lane, const std::byte* dst, std::size_t bytes) {
    opIndex_ = lane.opIndex();
    const auto at = static_cast<std::size_t>(dst - base());
    for (const Pending& p : pending_)
      if (p.begin < at + bytes && at < p.end) waitFor(p.channel->consumed, p.seq, p.peer, "its read of a slice by");
    if (ex_.remote_) remoteSent(dst, bytes, "its read of a slice by");
    return true;
  }

  bool drained(Lane& lane) {
    opIndex_ = lane.opIndex();
    for (const Pending& p : pending_) waitFor(p.channel->consumed, p.seq, p.peer, "its last slices to be read by");
    pending_.clear();
    if (ex_.remote_) remoteSent(nullptr, SIZE_MAX, "its last slices to be received by");
    return true;
  }

 private:
  struct Pending {  // a sent slice the receiver may still be reading (byte offsets in the segment)
    std::size_t begin, end;
    Channel* channel;
    int peer;
    std::uint32_t seq;
  };

  [[nodiscard]] std::byte* base() const { return ex_.own_.data(); }

  // Through the links, bounded like every wait here; a failure aborts this node's ranks too.
  // A wait for another node times out remoteGrace later: that node's ranks see further.
  void remoteReceive(int globalPeer, int channel, std::byte* dst, std::size_t bytes) {
    const Waiting waiting(ex_, globalPeer + 1);
    const auto r = ex_.remote_->receive(globalPeer, channel, dst, bytes, Clock::now() + remoteTimeout(), stopped());
    remoteFailure(r, globalPeer, "data from");
  }
  void remoteSent(const std::byte* begin, std::size_t bytes, const char* what) {
    int peer = -1;
    const Waiting waiting(ex_, kWaitsOffNode);
    const auto r = ex_.remote_->sent(begin, bytes, Clock::now() + remoteTimeout(), stopped(), peer);
    remoteFailure(r, peer, what);
  }
  [[nodiscard]] std::chrono::nanoseconds remoteTimeout() const { return o_.timeout + remoteGrace(o_.timeout); }
  [[nodiscard]] std::function<bool()> stopped() const {
    return [this] { return ex_.control().abort.value.load(std::memory_order_acquire) != 0; };
  }
  void remoteFailure(RemoteLinks::Wait r, int globalPeer, const char* what) {
    if (r == RemoteLinks::Wait::Ready) return;
    const std::string where = " at op " + std::to_string(opIndex_) + " waiting for " + what + " rank " + std::to_string(globalPeer);
    if (r == RemoteLinks::Wait::TimedOut) {
      ex_.fail({});  // this node's ranks stop too
      throw TimeoutError(head() + " lost rank " + std::to_string(globalPeer) + ": timed out after " + milliseconds(remoteTimeout()) +
                         where + " (on another node)");
    }
    const std::uint32_t code = ex_.control().abort.value.load(std::memory_order_acquire);
    throw TimeoutError(head() + " stopped: stopped by rank " + std::to_string(ex_.globalOf(static_cast<int>(code) - 1)) + where);
  }

  void waitFor(const SharedWord& word, std::uint32_t target, int peer, const char* what) {
    if (reached(word.value.load(std::memory_order_acquire), target)) return;
    ex_.waitReady(word, [target](std::uint32_t v) { return reached(v, target); }, peer, what, {&plan_, opIndex_, call_},
                  o_.timeout, o_.spin);
  }

  [[nodiscard]] std::string head() const { return ex_.head({&plan_, opIndex_, call_}); }

  ShmExecutor& ex_;
  const plan::Plan& plan_;
  const ShmLayout& layout_;
  const ShmRunOptions& o_;
  std::uint32_t call_;  // this rank's call number (arrived counter)
  std::vector<Pending> pending_;
  std::vector<std::vector<std::byte>> remoteValues_;  // slices received from ranks off the node
  std::size_t opIndex_ = 0;
};

void ShmExecutor::run(const plan::Plan& plan, const ShmLayout& layout, const ShmRunOptions& options) {
  if (plan.nranks != jobRanks_) throw InvalidArgument("proc: plan for " + std::to_string(plan.nranks) + " ranks");
  if (plan::reduces(plan.collective) && options.reduce == nullptr)
    throw InvalidArgument("proc: a reducing plan needs a reduce function");
  throwIfAborted(plan);
  const auto counts = plan::bufferCounts(plan.collective, plan.nranks, plan.count);
  const auto fits = [&](std::size_t at, std::int64_t elems) {
    return at + static_cast<std::size_t>(elems) * options.elemSize <= own_.size();
  };
  if (!fits(layout.input, counts.input) || !fits(layout.output, counts.output) || !fits(layout.scratch, plan.scratchCount))
    throw InvalidArgument("proc: the buffers of this plan do not fit the " + std::to_string(own_.size()) +
                          "-byte segment at the given layout");
  RankRun(*this, plan, layout, options, arrive()).execute();
}

}  // namespace cclab::proc
