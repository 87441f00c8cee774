// ShmExecutor: the host executor's single-copy channels with offsets instead of pointers, over shared
// segments, and cross-process waits; a transport of the executor core (plan::PlanRunner). The node
// layer under it (segments, joining, liveness, abort, the blame of a failed wait) is ShmNode's
// (shm_node.h); this file builds the executor over its node and holds the slot transport (RankRun)
// and run().
// A plan of several channels runs them one after the other (SliceCursor over plan::sequentialOps: as
// listed, channel by channel, or phase by phase when the plan has phase deps, which that order honours)
// over one connection per ordered pair: every rank walks the same order, so the k-th message on a pair
// is still the one the plan pairs it with (plan.h), and a channel never waits on a later one.
#include "collectives/proc/shm_executor.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/core/errors.h"
#include "collectives/host/rank_memory.h"
#include "collectives/plan/plan_runner.h"

namespace cclab::proc {

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
    : nranks_(static_cast<int>(node.ranks.size())),
      jobRanks_(node.jobRanks),
      llRingLines_(nranks_ == jobRanks_ ? shmLlRingLines(nranks_) : 0),  // LL only when the node is the whole job
      node_(job, globalRank, node, bufferBytes, timeout, remote, llRingLines_) {
  const int rank = node_.rank();
  if (llRingLines_ > 0) {
    for (int r = 0; r < nranks_; ++r) {
      llTo_.emplace_back(node_.llRing(rank, r), &node_.llWords(rank, r).bell, &node_.llWords(rank, r).acked);
      llFrom_.emplace_back(node_.llRing(r, rank), &node_.llWords(r, rank).bell, &node_.llWords(r, rank).acked);
    }
  }
}

std::int64_t shmLlRingLines(int nodeRanks) {
  const std::int64_t lines = llAffordableLines(nodeRanks, kShmLlBudgetBytes);
  return lines < kShmLlMinRingLines ? 0 : std::min(lines, kShmLlMaxRingLines);
}

// The shared-memory slot transport (plan_runner.h) of this rank during one run(): its outstanding
// sends and its waits. One sequential lane; every call waits (bounded) until it can proceed
// (plan::WaitingTransport), and a write or the end waits for the reads of what was sent from there.
class ShmExecutor::RankRun : public plan::WaitingTransport {
 public:
  RankRun(ShmExecutor& ex, const plan::Plan& plan, const ShmLayout& layout, const ShmRunOptions& o, std::uint32_t call)
      : ex_(ex), node_(ex.node_), plan_(plan), layout_(layout), o_(o), call_(call) {}

  void execute() {
    const int rank = node_.globalOf(node_.rank());
    plan::PlanRunner<RankRun>(*this, ex_.slotRunner_, plan_, rank, {o_.elemSize, o_.reduce, o_.sliceElems, false}).run();
  }

  std::byte* address(const plan::Range& r, std::int64_t lo) const {
    return host::RankMemory{base() + layout_.input, base() + layout_.output, base() + layout_.scratch}.at(r, lo, o_.elemSize);
  }

  // The peer is a rank of the job: on this node through the shared connection, else through the links.
  bool trySend(Lane& lane, const plan::Op& op, const std::byte* src, std::size_t bytes) {
    opIndex_ = lane.opIndex();
    const int peer = node_.localOf(op.peer);
    if (peer < 0) {
      node_.remote()->send(op.peer, op.channel, src, bytes);
      return true;
    }
    Channel& ch = node_.channel(node_.rank(), peer);
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
    const int peer = node_.localOf(globalPeer);
    if (peer < 0) {
      if (!into) {
        if (remoteValues_.size() <= static_cast<std::size_t>(index)) remoteValues_.resize(static_cast<std::size_t>(index) + 1);
        auto& v = remoteValues_[static_cast<std::size_t>(index)];
        if (v.size() < bytes) v.resize(bytes);
        into = v.data();
      }
      node_.remoteReceive(site(), globalPeer, op.channel, into, bytes, o_.timeout);
      return into;
    }
    const Channel& ch = node_.channel(peer, node_.rank());
    const std::uint32_t seq = ch.consumed.value.load(std::memory_order_relaxed);  // only this rank writes it
    waitFor(ch.posted, seq + 1, peer, "data from");
    return node_.base(peer) + ch.slots[seq % kSlots];
  }

  void release(Lane&, const plan::Op&, int globalPeer) {
    const int peer = node_.localOf(globalPeer);
    if (peer < 0) return;
    Channel& ch = node_.channel(peer, node_.rank());
    ch.consumed.store(ch.consumed.value.load(std::memory_order_relaxed) + 1);
  }

  // Before writing [dst, dst+bytes): every slice this rank sent from there must have been read.
  bool writable(Lane& lane, const std::byte* dst, std::size_t bytes) {
    opIndex_ = lane.opIndex();
    const auto at = static_cast<std::size_t>(dst - base());
    for (const Pending& p : pending_)
      if (p.begin < at + bytes && at < p.end) waitFor(p.channel->consumed, p.seq, p.peer, "its read of a slice by");
    if (node_.remote()) node_.remoteSent(site(), dst, bytes, "its read of a slice by", o_.timeout);
    return true;
  }

  bool drained(Lane& lane) {
    opIndex_ = lane.opIndex();
    for (const Pending& p : pending_) waitFor(p.channel->consumed, p.seq, p.peer, "its last slices to be read by");
    pending_.clear();
    if (node_.remote()) node_.remoteSent(site(), nullptr, SIZE_MAX, "its last slices to be received by", o_.timeout);
    return true;
  }

 private:
  using Channel = ShmNode::Channel;
  static constexpr std::uint32_t kSlots = ShmNode::kSlots;
  struct Pending {  // a sent slice the receiver may still be reading (byte offsets in the segment)
    std::size_t begin, end;
    Channel* channel;
    int peer;
    std::uint32_t seq;
  };

  [[nodiscard]] std::byte* base() const { return node_.buffer(); }
  [[nodiscard]] ShmNode::WaitSite site() const { return {&plan_, opIndex_, call_}; }

  void waitFor(const SharedWord& word, std::uint32_t target, int peer, const char* what) {
    if (reached(word.value.load(std::memory_order_acquire), target)) return;
    node_.waitReady(word, [target](std::uint32_t v) { return reached(v, target); }, peer, what, site(), o_.timeout, o_.spin);
  }

  ShmExecutor& ex_;
  ShmNode& node_;
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
  node_.throwIfAborted(plan);
  const auto counts = plan::bufferCounts(plan.collective, plan.nranks, plan.count);
  const auto fits = [&](std::size_t at, std::int64_t elems) {
    return at + static_cast<std::size_t>(elems) * options.elemSize <= node_.bufferBytes();
  };
  if (!fits(layout.input, counts.input) || !fits(layout.output, counts.output) || !fits(layout.scratch, plan.scratchCount))
    throw InvalidArgument("proc: the buffers of this plan do not fit the " + std::to_string(node_.bufferBytes()) +
                          "-byte segment at the given layout");
  RankRun(*this, plan, layout, options, node_.arrive()).execute();
}

}  // namespace cclab::proc
