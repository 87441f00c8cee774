// ShmNode (shm_node.h): the segments of a node and their layout, joining, liveness, abort, and the
// blame of a failed wait, under both of ShmExecutor's transports.
#include "collectives/proc/shm_node.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "collectives/core/error_text.h"
#include "collectives/core/errors.h"
#include "collectives/core/pause_clock.h"
#include "collectives/proc/stale_sweep.h"

namespace cclab::proc {
namespace {

// Whether `pid` is stopped (SIGSTOP, a debugger): state T or t in /proc/<pid>/stat.
bool processStopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (pid <= 0 || !in || !std::getline(in, text)) return false;
  const auto close = text.rfind(')');  // "pid (comm) state ...": comm may hold spaces and ')'
  return close != std::string::npos && close + 2 < text.size() && (text[close + 2] == 'T' || text[close + 2] == 't');
}

}  // namespace

ShmNode::ShmNode(const std::string& job, int globalRank, const NodeRanks& node, std::size_t bufferBytes,
                 std::chrono::nanoseconds timeout, RemoteLinks* remote, std::int64_t llRingLines)
    : rank_(-1), nranks_(static_cast<int>(node.ranks.size())), jobRanks_(node.jobRanks), global_(node.ranks), remote_(remote),
      llRingLines_(llRingLines) {
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
  // Control, RankInfo[nranks], Channel[nranks * nranks], then the LL words and rings.
  llOffset_ = sizeof(Control) + sizeof(RankInfo) * n + sizeof(Channel) * n * n;
  const std::size_t llBytes = llRingLines_ > 0 ? n * n * (sizeof(LlWords) + static_cast<std::size_t>(llRingLines_) * sizeof(LlLine)) : 0;
  const std::size_t ctrlBytes = llOffset_ + llBytes;
  const std::string ctrlName = segmentName(job, 0, "ctrl");
  const auto deadline = Clock::now() + timeout;  // one bound for joining, however many peers
  const auto left = [deadline] { return std::max<std::chrono::nanoseconds>(deadline - Clock::now(), {}); };
  ctrl_ = rank == 0 ? ShmSegment::create(ctrlName, ctrlBytes) : ShmSegment::attach(ctrlName, left());
  if (ctrl_.size() != ctrlBytes)
    throw InvalidArgument("proc: control segment '" + ctrlName + "' is for another number of ranks");
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

void ShmNode::joinAndUnlink(Clock::time_point deadline) {
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
    throw TimeoutError("proc: rank " + std::to_string(globalOf(rank_)) + " joined, but " +
                       (absent.empty() ? std::string("not every rank of the node attached") : namedRanks(absent) + " never joined") +
                       (r == WaitResult::Aborted ? " (the job was aborted)" : ""));
  }
  own_.unlinkName();
  ctrl_.unlinkName();  // a no-op except on rank 0, its creator
}

ShmNode::LlWords& ShmNode::llWords(int from, int to) const {
  auto* words = reinterpret_cast<LlWords*>(ctrl_.data() + llOffset_);
  return words[static_cast<std::size_t>(from) * static_cast<std::size_t>(nranks_) + static_cast<std::size_t>(to)];
}

LlRing ShmNode::llRing(int from, int to) const {
  const auto n = static_cast<std::size_t>(nranks_);
  auto* lines = reinterpret_cast<LlLine*>(ctrl_.data() + llOffset_ + n * n * sizeof(LlWords));
  const std::size_t pair = static_cast<std::size_t>(from) * n + static_cast<std::size_t>(to);
  return LlRing(lines + pair * static_cast<std::size_t>(llRingLines_), llRingLines_, kLlMaxFlagPeriod);
}

ShmNode::RankInfo& ShmNode::info(int r) const {
  return reinterpret_cast<RankInfo*>(ctrl_.data() + sizeof(Control))[r];
}

bool ShmNode::alive(int r) const {
  const RankInfo& i = info(r);
  const pid_t pid = i.pid.load(std::memory_order_acquire);
  return pid == 0 || creatorAlive(pid, i.startTime.load(std::memory_order_relaxed));
}

ShmNode::Channel& ShmNode::channel(int from, int to) const {
  auto* channels = reinterpret_cast<Channel*>(ctrl_.data() + sizeof(Control) + sizeof(RankInfo) * static_cast<std::size_t>(nranks_));
  return channels[static_cast<std::size_t>(from) * static_cast<std::size_t>(nranks_) + static_cast<std::size_t>(to)];
}

void ShmNode::fail(const std::vector<int>& lost) {
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

void ShmNode::abort() { fail({}); }

std::vector<int> ShmNode::globalOf(const std::vector<int>& locals) const {
  std::vector<int> out;
  for (int l : locals) out.push_back(globalOf(l));
  return out;
}

std::vector<int> ShmNode::lostRanks() const {
  std::vector<int> lost;
  for (int r = 0; r < nranks_; ++r)
    if (control().lost[r / 32].load(std::memory_order_acquire) & (1U << (r % 32))) lost.push_back(r);
  return lost;
}

std::vector<int> ShmNode::othersLost() const {
  std::vector<int> lost = lostRanks();
  std::erase(lost, rank_);
  return lost;
}

ShmNode::Culprit ShmNode::culprit(int peer) const {
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

std::vector<int> ShmNode::lateRanks(std::uint32_t call) const {
  std::vector<int> late;
  for (int r = 0; r < nranks_; ++r) {
    if (reached(arrived(r).value.load(std::memory_order_acquire), call)) continue;
    // Still in an earlier call and waiting there for another rank: held up, in the chain of waits, not
    // late itself (ranks drift a call apart where a plan does not join every pair) -- unless stopped.
    const bool waits = info(r).waitingFor.load(std::memory_order_acquire) != 0;
    if (!waits || processStopped(info(r).pid.load(std::memory_order_acquire))) late.push_back(r);
  }
  return late;
}

std::string ShmNode::head(const WaitSite& site) const {
  return "proc " + std::string(plan::name(site.plan->collective)) + "/" + std::string(plan::name(site.plan->algorithm)) +
         ": rank " + std::to_string(globalOf(rank_));
}

std::string ShmNode::tail(const WaitSite& site, int globalPeer, const char* what) const {
  return " at op " + std::to_string(site.opIndex) + " waiting for " + what + " rank " + std::to_string(globalPeer);
}

void ShmNode::waitReady(const SharedWord& word, const std::function<bool(std::uint32_t)>& ready, int peer,
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
      // A peer that aborted the job before it ended is not lost: the abort line names whom it blamed.
      if (control().abort.value.load(std::memory_order_acquire) != 0) break;
      fail({peer});
      throw TimeoutError(head(site) + " lost rank " + std::to_string(globalOf(peer)) + ": its process (pid " +
                         std::to_string(info(peer).pid.load()) + ") died" + tail(site, globalOf(peer), what));
    }
  }
  failWait(site, globalOf(peer), what, graced ? timeout + remoteGrace(timeout) : timeout);
}

void ShmNode::publishWait(int globalPeer) {
  info(rank_).waitingFor.store(globalPeer >= 0 ? globalPeer + 1 : 0, std::memory_order_release);
}

ShmNode::Culprit ShmNode::culpritOfGlobal(int globalPeer) const {
  const int local = globalPeer >= 0 && globalPeer < jobRanks_ ? localOf(globalPeer) : -1;
  return local >= 0 ? culprit(local) : Culprit{globalPeer, true};
}

bool ShmNode::chainLeavesNode(int globalPeer, std::uint32_t call) const {
  return lateRanks(call).empty() && culpritOfGlobal(globalPeer).offNode;
}

void ShmNode::failWait(const WaitSite& site, int globalPeer, const char* what, std::chrono::nanoseconds waited) {
  if (!aborted()) {
    // Timed out. Blame the ranks that never started this call when there are any, else the end of the
    // chain of waits from the peer (the peer itself unless it waits for another rank).
    const std::vector<int> late = lateRanks(site.call);
    if (!late.empty()) {
      fail(late);
      throw TimeoutError(head(site) + " lost " + namedRanks(globalOf(late)) + ": timed out after " + millisecondsText(waited) +
                         tail(site, globalPeer, what) + " (never arrived)");
    }
    const Culprit c = culpritOfGlobal(globalPeer);
    const int local = c.global >= 0 && c.global < jobRanks_ ? localOf(c.global) : -1;
    fail(local >= 0 ? std::vector<int>{local} : std::vector<int>{});
    throw TimeoutError(head(site) + " lost rank " + std::to_string(c.global) + ": timed out after " + millisecondsText(waited) +
                       tail(site, globalPeer, what) +
                       (c.global == globalPeer ? "" : c.offNode ? " (which waits for it on another node)" : " (which waits for it)"));
  }
  const std::uint32_t code = control().abort.value.load(std::memory_order_acquire);
  const std::vector<int> lost = othersLost();
  throw TimeoutError(head(site) + (lost.empty() ? " stopped" : " lost " + namedRanks(globalOf(lost))) + ": stopped by rank " +
                     std::to_string(globalOf(static_cast<int>(code) - 1)) + tail(site, globalPeer, what));
}

void ShmNode::remoteReceive(const WaitSite& site, int globalPeer, int channel, std::byte* dst, std::size_t bytes,
                            std::chrono::nanoseconds timeout) {
  const Waiting waiting(*this, globalPeer + 1);
  const auto stopped = [this] { return control().abort.value.load(std::memory_order_acquire) != 0; };
  const auto r = remote_->receive(globalPeer, channel, dst, bytes, Clock::now() + timeout + remoteGrace(timeout), stopped);
  remoteFailure(site, r, globalPeer, "data from", timeout);
}

void ShmNode::remoteSent(const WaitSite& site, const std::byte* begin, std::size_t bytes, const char* what,
                         std::chrono::nanoseconds timeout) {
  int peer = -1;
  const Waiting waiting(*this, kWaitsOffNode);
  const auto stopped = [this] { return control().abort.value.load(std::memory_order_acquire) != 0; };
  const auto r = remote_->sent(begin, bytes, Clock::now() + timeout + remoteGrace(timeout), stopped, peer);
  remoteFailure(site, r, peer, what, timeout);
}

void ShmNode::remoteFailure(const WaitSite& site, RemoteLinks::Wait r, int globalPeer, const char* what,
                            std::chrono::nanoseconds timeout) {
  if (r == RemoteLinks::Wait::Ready) return;
  const std::string where = " at op " + std::to_string(site.opIndex) + " waiting for " + what + " rank " + std::to_string(globalPeer);
  if (r == RemoteLinks::Wait::TimedOut) {
    fail({});  // this node's ranks stop too
    throw TimeoutError(head(site) + " lost rank " + std::to_string(globalPeer) + ": timed out after " +
                       millisecondsText(timeout + remoteGrace(timeout)) + where + " (on another node)");
  }
  const std::uint32_t code = control().abort.value.load(std::memory_order_acquire);
  throw TimeoutError(head(site) + " stopped: stopped by rank " + std::to_string(globalOf(static_cast<int>(code) - 1)) + where);
}

void ShmNode::throwIfAborted(const plan::Plan& plan) const {
  const std::uint32_t code = control().abort.value.load(std::memory_order_acquire);
  if (code == 0) return;
  // Already aborted (by this rank in an earlier call, or by a peer before this rank got here): the
  // same one line as the ranks that were waiting, naming the lost ranks.
  const std::vector<int> lost = othersLost();
  throw TimeoutError("proc " + std::string(plan::name(plan.collective)) + "/" + std::string(plan::name(plan.algorithm)) +
                     ": rank " + std::to_string(globalOf(rank_)) + (lost.empty() ? " stopped" : " lost " + namedRanks(globalOf(lost))) +
                     ": stopped by rank " + std::to_string(globalOf(static_cast<int>(code) - 1)) + " before this call");
}

std::uint32_t ShmNode::arrive() {
  SharedWord& a = arrived(rank_);  // only this rank writes it
  const std::uint32_t call = a.value.load(std::memory_order_relaxed) + 1;
  a.value.store(call, std::memory_order_release);
  return call;
}

}  // namespace cclab::proc
