// The node layer of the process backend: what the ranks of one node share, under every transport that
// runs plans between them (ShmExecutor's slot transport, shm_executor.cc, and its LL transport,
// shm_ll.cc). It dispatches no op; it owns
//  - the segments: rank 0's control segment ("/cclab-<job>-0-ctrl") and every rank's buffer segment
//    ("/cclab-<job>-<rank>-buf"), this rank's own and every peer's as mapped here;
//  - the control segment's layout: Control (the abort word, the joined count, the lost-ranks bitmask),
//    then RankInfo per rank (arrival counter, pid and start time, whom it waits for), then a slot
//    Channel per ordered pair, then, when the node has LL rings, LlWords per ordered pair and the rings;
//  - joining (bounded) and the removal of the names once every rank has joined;
//  - abort, liveness and the blame of a failed wait: waitReady is the one bounded wait of both
//    transports (shared_wait.h's, in rounds of kLivenessCheck that check the peer still runs); at its
//    end it names the ranks that never arrived, or the end of the chain of waits from its peer, writes
//    them into the lost-ranks bitmask and aborts every rank of the node;
//  - the waits on peers off the node, through RemoteLinks, bounded and blamed the same way.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectives/core/ll_ring.h"
#include "collectives/plan/plan.h"
#include "collectives/proc/shared_wait.h"
#include "collectives/proc/shm_segment.h"

namespace cclab::proc {

// Peers on other nodes: a ShmExecutor that runs one node of a job moves the slices to and from them
// through these links (the process backend's MPI links, collectives/mpi/mpi_links.h) and everything
// within the node through shared memory. Ranks here are the job's (global) ranks.
class RemoteLinks {
 public:
  enum class Wait { Ready, TimedOut, Stopped };
  virtual ~RemoteLinks() = default;
  // Starts sending [src, src + bytes) to `peer` on plan channel `channel`; returns at once.
  virtual void send(int peer, int channel, const std::byte* src, std::size_t bytes) = 0;
  // Receives the next slice from `peer` on `channel` into dst; gives up at `deadline` or once `stop()`.
  virtual Wait receive(int peer, int channel, std::byte* dst, std::size_t bytes, std::chrono::steady_clock::time_point deadline,
                       const std::function<bool()>& stop) = 0;
  // Waits until no send from [begin, begin + bytes) is in flight (bytes = SIZE_MAX: no send at all);
  // on TimedOut/Stopped `peer` names a receiver still waited for.
  virtual Wait sent(const std::byte* begin, std::size_t bytes, std::chrono::steady_clock::time_point deadline,
                    const std::function<bool()>& stop, int& peer) = 0;
  // Moves this rank's sends in flight along without waiting; true while some are still in flight. The
  // node's shared-memory waits call it between short rounds while it says true: MPI over TCP moves a
  // large message only while its sender polls, and its receiver may need it before it sends what this
  // rank waits for (a ring across nodes deadlocks otherwise).
  virtual bool progress() { return false; }
};

// The ranks of the job that share this node (ascending global ranks) and the job's size.
struct NodeRanks {
  std::vector<int> ranks;
  int jobRanks = 0;
};

class ShmNode {
 public:
  static constexpr std::uint32_t kSlots = 16;
  static constexpr int kMaxRanks = 256;
  static constexpr std::chrono::milliseconds kLivenessCheck{100};
  static constexpr std::chrono::microseconds kProgressRound{50};  // RemoteLinks::progress this often in a wait
  // A wait whose chain of waits leads to another node times out this much later than the timeout, so
  // the ranks on the node of the rank that holds the job up, which can name it, report first.
  static constexpr std::chrono::nanoseconds remoteGrace(std::chrono::nanoseconds timeout) { return timeout / 2; }

  // The slot channel of an ordered pair (from, to) of the node's ranks.
  struct alignas(64) Channel {
    SharedWord posted;    // slices published by the sender
    SharedWord consumed;  // slices the receiver has finished reading
    std::uint64_t slots[kSlots];  // byte offsets in the sender's segment
  };
  // LL: per ordered pair (from, to) of local ranks, the words in the control segment and the ring.
  struct alignas(64) LlWords {
    SharedWord acked;  // units the reader has read, mod 2^32 (a sender waiting for room sleeps on it)
    SharedWord bell;   // bumped for a reader that sleeps waiting for data
  };
  // Where a wait happens, for its error line.
  struct WaitSite {
    const plan::Plan* plan;
    std::size_t opIndex;
    std::uint32_t call;  // this rank's call number (arrived counter)
  };

  // This process, rank `globalRank` of the job, joins the node `node` of job `job`: the lowest rank of
  // the node creates the control segment (with LL rings of `llRingLines` lines, 0: none; segments are
  // named by their local index), every rank creates its buffer segment of `bufferBytes` and maps every
  // peer's; joining takes at most `timeout` in all, else TimeoutError naming the segment that did not
  // appear or the ranks that never joined. `remote` (not owned) reaches the ranks off the node; it may
  // not be null when some rank is off the node.
  ShmNode(const std::string& job, int globalRank, const NodeRanks& node, std::size_t bufferBytes,
          std::chrono::nanoseconds timeout, RemoteLinks* remote, std::int64_t llRingLines);
  ShmNode(const ShmNode&) = delete;
  ShmNode& operator=(const ShmNode&) = delete;

  [[nodiscard]] int rank() const { return rank_; }       // local index on this node
  [[nodiscard]] int nranks() const { return nranks_; }   // ranks on this node
  [[nodiscard]] int jobRanks() const { return jobRanks_; }
  // Global rank of local index i, and the local index of global rank g (-1: off this node).
  [[nodiscard]] int globalOf(int local) const { return global_[static_cast<std::size_t>(local)]; }
  [[nodiscard]] int localOf(int global) const { return local_[static_cast<std::size_t>(global)]; }
  [[nodiscard]] RemoteLinks* remote() const { return remote_; }

  // This rank's buffer segment, and local rank r's buffers as mapped here.
  [[nodiscard]] std::byte* buffer() const { return own_.data(); }
  [[nodiscard]] std::size_t bufferBytes() const { return own_.size(); }
  [[nodiscard]] std::byte* base(int r) const { return bases_[static_cast<std::size_t>(r)]; }

  [[nodiscard]] Channel& channel(int from, int to) const;
  [[nodiscard]] LlWords& llWords(int from, int to) const;
  [[nodiscard]] LlRing llRing(int from, int to) const;

  // Counts this rank's arrival at a new call and returns its number.
  std::uint32_t arrive();
  // Throws the "stopped by rank R before this call" line when the job is aborted; else returns.
  void throwIfAborted(const plan::Plan& plan) const;
  // "proc <collective>/<algorithm>: rank R", the start of every error line of a wait.
  [[nodiscard]] std::string head(const WaitSite& site) const;
  // Waits until ready(word.value) (its first check already failed), in rounds of kLivenessCheck that
  // check the local `peer` still runs; throws TimeoutError naming the lost ranks at the deadline, when
  // the peer died, or when the job was aborted (and aborts the job itself in the first two cases).
  void waitReady(const SharedWord& word, const std::function<bool(std::uint32_t)>& ready, int peer, const char* what,
                 const WaitSite& site, std::chrono::nanoseconds timeout, std::chrono::nanoseconds spin);
  // Through the links (remote() is not null), bounded by `timeout` + remoteGrace (the other node's
  // ranks see further); a failure aborts this node's ranks too. Receives the next slice from
  // `globalPeer` on `channel` into dst, or waits until no send from [begin, begin + bytes) is in flight.
  void remoteReceive(const WaitSite& site, int globalPeer, int channel, std::byte* dst, std::size_t bytes,
                     std::chrono::nanoseconds timeout);
  void remoteSent(const WaitSite& site, const std::byte* begin, std::size_t bytes, const char* what,
                  std::chrono::nanoseconds timeout);
  // Ends every peer's waits now (they throw naming this rank).
  void abort();

  // The same blame for waits that do not sleep on this node's words: the all-MPI transport
  // (CCLAB_PROC_TRANSPORT=mpi, collectives/mpi/mpi_executor.cc) moves every slice over MPI and keeps a
  // node only so that its ranks publish whom they wait for, count their calls (arrive) and blame by
  // waitReady's rule. Peers are global ranks here, on this node or off it.
  // This rank now waits for `globalPeer` (-1: for nobody: between calls, or busy).
  void publishWait(int globalPeer);
  // At the timeout of a wait for `globalPeer` in call `call`: true when no rank of the node is late and
  // the chain of waits leaves the node, so the wait should go on for remoteGrace before it fails.
  [[nodiscard]] bool chainLeavesNode(int globalPeer, std::uint32_t call) const;
  // Ends such a wait after `waited`: throws waitReady's line (the ranks that never started the call,
  // else the end of the chain of waits, never this rank; "stopped by rank R" once another rank
  // aborted the node) and aborts the node's ranks.
  [[noreturn]] void failWait(const WaitSite& site, int globalPeer, const char* what, std::chrono::nanoseconds waited);
  // Whether some rank of the node ended the job (its waits should stop: failWait says by whom).
  [[nodiscard]] bool aborted() const { return control().abort.value.load(std::memory_order_acquire) != 0; }

 private:
  struct alignas(64) Control {
    SharedWord abort;  // 1 + the rank that aborted first
    SharedWord joined;  // ranks that have attached to every segment of the node
    std::atomic<std::uint32_t> lost[kMaxRanks / 32];  // bit r: rank r was blamed by a timeout
  };
  // Per rank, in the control segment: its arrival counter and who it is (so peers notice its death).
  struct alignas(64) RankInfo {
    SharedWord arrived;                    // calls this rank has started
    std::atomic<std::int32_t> pid;         // 0 until the rank joined
    std::atomic<std::uint64_t> startTime;  // stale_sweep.h's processStartTime of that pid
    // Whom this rank waits for now, so a peer that times out can follow the chain of waits to the rank
    // that holds it up: 1 + a global rank, kWaitsOffNode for a send to some rank off the node, 0 none.
    std::atomic<std::int32_t> waitingFor;
  };
  static constexpr std::int32_t kWaitsOffNode = -1;
  // Sets this rank's waitingFor for the lifetime of a wait.
  class Waiting {
   public:
    Waiting(const ShmNode& node, std::int32_t code) : info_(node.info(node.rank_)) {
      info_.waitingFor.store(code, std::memory_order_release);
    }
    ~Waiting() { info_.waitingFor.store(0, std::memory_order_release); }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;

   private:
    RankInfo& info_;
  };
  // Whom a timed-out wait for local rank `peer` blames: the end of the chain of waits from `peer`
  // (a stopped process, or a rank that waits for nobody), never this rank; offNode when the chain
  // leaves the node (that node's ranks see further, so this one reports only after remoteGrace).
  struct Culprit {
    int global;
    bool offNode;
  };

  [[nodiscard]] Control& control() const { return *reinterpret_cast<Control*>(ctrl_.data()); }
  [[nodiscard]] RankInfo& info(int r) const;
  [[nodiscard]] SharedWord& arrived(int r) const { return info(r).arrived; }
  // Counts this rank as joined, waits (until `deadline`) for every rank of the node, then removes the
  // names of the segments this rank created: from then on no file is left behind, however it ends.
  void joinAndUnlink(Clock::time_point deadline);
  // False once rank r joined and its process has died (a SIGKILL, a crash).
  [[nodiscard]] bool alive(int r) const;
  // Blames `lost` (the ranks a timeout found missing), sets the abort word and wakes every waiter.
  void fail(const std::vector<int>& lost);
  [[nodiscard]] std::vector<int> lostRanks() const;
  // The lost ranks, except this one (a rank that was stopped and resumes does not blame itself).
  [[nodiscard]] std::vector<int> othersLost() const;
  // The ranks that have not started call number `call`, except those waiting for another rank in an
  // earlier call (held up, not late) that are not stopped.
  [[nodiscard]] std::vector<int> lateRanks(std::uint32_t call) const;
  [[nodiscard]] Culprit culprit(int peer) const;
  // culprit() of a global rank; a rank off the node is its own culprit, off the node.
  [[nodiscard]] Culprit culpritOfGlobal(int globalPeer) const;
  [[nodiscard]] std::vector<int> globalOf(const std::vector<int>& locals) const;
  // " at op N waiting for <what> rank P" (P global).
  [[nodiscard]] std::string tail(const WaitSite& site, int globalPeer, const char* what) const;
  // Throws the line of a remote wait that ended with `r` unless it is Ready.
  void remoteFailure(const WaitSite& site, RemoteLinks::Wait r, int globalPeer, const char* what, std::chrono::nanoseconds timeout);

  int rank_;     // local index on this node
  int nranks_;   // ranks on this node
  int jobRanks_;
  std::vector<int> global_, local_;
  RemoteLinks* remote_ = nullptr;
  std::int64_t llRingLines_ = 0;    // 0: no LL rings on this node
  std::size_t llOffset_ = 0;        // where the LL words start in the control segment
  ShmSegment ctrl_;                 // rank 0 owns it; the others attach
  ShmSegment own_;                  // this rank's buffers
  std::vector<ShmSegment> peers_;   // peers_[r]: rank r's buffers (empty for this rank)
  std::vector<std::byte*> bases_;   // bases_[r]: rank r's buffers as mapped here
};

}  // namespace cclab::proc
