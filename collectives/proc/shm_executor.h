// A plan executor for ranks that are processes on one node: the single-copy idea of the host executor
// (collectives/host/host_executor.h) across processes. Every rank's buffers (input, output, scratch)
// live in a shared segment of its own ("/cclab-<job>-<rank>-buf") that every peer maps; a send publishes
// the byte offset of the slice inside the sender's segment in a slot of the channel (from, to), the
// receiver copies or reduces straight from its mapping of the sender's segment, then counts the slot
// consumed. The channels, the abort word and the arrival counters live in rank 0's control segment
// ("/cclab-<job>-0-ctrl"). Waits are shared_wait.h's: bounded, and a timeout in one rank sets the abort
// word so every other rank stops at once too. A wait also checks, every kLivenessCheck, that the peer it
// waits for still runs (its pid and start time are in the control segment), so a killed rank is
// noticed in about that time rather than at the timeout.
//
// Small calls have a second path, LL (shm_ll.cc, after the host's: collectives/core/ll_ring.h): one
// ring of flagged lines per ordered pair of ranks in the control segment, into which a send writes its
// data with the flag in each 8-byte word; the receiver polls the words themselves. A tiny allreduce is
// then one line written and one line polled per peer, with no posted/consumed counters and no wait for
// the reader (runLl; llFits says which plans fit).
//
// The ranks agree on the job id and the sizes beforehand (the process backend through MPI,
// collectives/proc/proc_communicator.h; tests by fork).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectives/call/vocabulary.h"
#include "collectives/core/dtype.h"
#include "collectives/core/ll_ring.h"
#include "collectives/plan/plan.h"
#include "collectives/plan/plan_runner.h"
#include "collectives/proc/shared_wait.h"
#include "collectives/proc/shm_segment.h"

namespace cclab::proc {

using ShmRunOptions = cclab::RunOptions;  // the executors' one options struct (collectives/call/vocabulary.h)

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

// Where a rank's buffers lie in its segment (byte offsets; scratch may be empty).
struct ShmLayout {
  std::size_t input = 0;
  std::size_t output = 0;
  std::size_t scratch = 0;
};

// A rank's buffers for the LL path, anywhere in this process (LL copies the data into its lines).
struct LocalBuffers {
  const std::byte* input = nullptr;
  std::byte* output = nullptr;
  std::byte* scratch = nullptr;
};

// Lines per LL ring (one per ordered pair of a node's ranks): kShmLlMaxRingLines (4 KiB, 2 KiB of
// data: the host's LL threshold is 1 KiB), fewer when nranks^2 rings would pass kShmLlBudgetBytes;
// below kShmLlMinRingLines the node has no LL path (0).
inline constexpr std::int64_t kShmLlMaxRingLines = 64;
inline constexpr std::int64_t kShmLlMinRingLines = 16;
inline constexpr std::size_t kShmLlBudgetBytes = std::size_t{8} << 20;
std::int64_t shmLlRingLines(int nodeRanks);

class ShmExecutor {
 public:
  static constexpr std::uint32_t kSlots = 16;
  static constexpr int kMaxRanks = 256;
  static constexpr std::chrono::milliseconds kLivenessCheck{100};
  static constexpr std::chrono::microseconds kProgressRound{50};  // RemoteLinks::progress this often in a wait
  // A wait whose chain of waits leads to another node times out this much later than the timeout, so
  // the ranks on the node of the rank that holds the job up, which can name it, report first.
  static constexpr std::chrono::nanoseconds remoteGrace(std::chrono::nanoseconds timeout) { return timeout / 2; }

  // Rank `rank` of `nranks` joins job `job`: rank 0 creates the control segment, every rank creates its
  // buffer segment of `bufferBytes` and maps every peer's; joining takes at most `timeout` in all, else
  // TimeoutError naming the segment that did not appear.
  ShmExecutor(const std::string& job, int rank, int nranks, std::size_t bufferBytes, std::chrono::nanoseconds timeout);
  // One node of a job: `globalRank` is this process's rank in the job, `node` the ranks sharing the node
  // (the lowest creates the control segment; segments are named by their local index); plans have the
  // job's ranks, and ops with peers off the node go through `remote` (not owned; may not be null when
  // some rank is off the node).
  ShmExecutor(const std::string& job, int globalRank, const NodeRanks& node, std::size_t bufferBytes,
              std::chrono::nanoseconds timeout, RemoteLinks* remote);
  ShmExecutor(const ShmExecutor&) = delete;
  ShmExecutor& operator=(const ShmExecutor&) = delete;

  [[nodiscard]] int rank() const { return global_[static_cast<std::size_t>(rank_)]; }  // in the job
  [[nodiscard]] int nranks() const { return jobRanks_; }
  // This rank's buffer segment (fill the input here; the output is read here).
  [[nodiscard]] std::byte* buffer() const { return own_.data(); }
  [[nodiscard]] std::size_t bufferBytes() const { return own_.size(); }

  // Runs this rank's ops of `plan` on buffers at `layout` in its segment; every rank must run the same
  // sequence of plans with the same layout. Throws TimeoutError naming the lost ranks (and then aborts
  // every peer's waits); once the job is aborted, every later call throws the same.
  void run(const plan::Plan& plan, const ShmLayout& layout, const ShmRunOptions& options);

  // Whether `plan` can run on the LL path (runLl) with elements of `elemSize` bytes: every rank of the
  // job is on this node, the node has LL rings, and the lines one call sends on each ordered pair
  // (all channels together) fit in a ring.
  [[nodiscard]] bool llFits(const plan::Plan& plan, std::size_t elemSize) const;
  // Runs this rank's ops of `plan` (which must fit: llFits, checked by the caller once per plan) over
  // the LL rings, whole ops in op order; options' sliceElems is ignored. Failures as run(). Every rank
  // runs the same sequence of calls, LL or not.
  void runLl(const plan::Plan& plan, const LocalBuffers& buffers, const ShmRunOptions& options);
  [[nodiscard]] std::int64_t llRingLines() const { return llRingLines_; }

  // Ends every peer's waits now (they throw naming this rank).
  void abort();

 private:
  struct alignas(64) Channel {
    SharedWord posted;    // slices published by the sender
    SharedWord consumed;  // slices the receiver has finished reading
    std::uint64_t slots[kSlots];  // byte offsets in the sender's segment
  };
  struct alignas(64) Control {
    SharedWord abort;  // 1 + the rank that aborted first
    SharedWord joined;  // ranks that have attached to every segment of the node
    std::atomic<std::uint32_t> lost[kMaxRanks / 32];  // bit r: rank r was blamed by a timeout
  };
  class RankRun;
  class LlRun;
  // Where a wait happens, for its error line.
  struct WaitSite {
    const plan::Plan* plan;
    std::size_t opIndex;
    std::uint32_t call;  // this rank's call number (arrived counter)
  };
  // Waits until ready(word.value) (its first check already failed), in rounds of kLivenessCheck that
  // check the peer still runs; throws TimeoutError naming the lost ranks at the deadline, when the peer
  // died, or when the job was aborted (and aborts the job itself in the first two cases).
  void waitReady(const SharedWord& word, const std::function<bool(std::uint32_t)>& ready, int peer, const char* what,
                 const WaitSite& site, std::chrono::nanoseconds timeout, std::chrono::nanoseconds spin);
  [[nodiscard]] std::string head(const WaitSite& site) const;
  [[nodiscard]] std::string tail(const WaitSite& site, int peer, const char* what) const;
  // Throws the "stopped by rank R before this call" line when the job is aborted; else returns.
  void throwIfAborted(const plan::Plan& plan) const;
  // Counts this rank's arrival at a new call and returns its number.
  std::uint32_t arrive();

  // LL: per ordered pair (from, to) of local ranks, the words in the control segment and the ring.
  struct alignas(64) LlWords {
    SharedWord acked;  // units the reader has read, mod 2^32 (a sender waiting for room sleeps on it)
    SharedWord bell;   // bumped for a reader that sleeps waiting for data
  };
  [[nodiscard]] LlWords& llWords(int from, int to) const;
  [[nodiscard]] LlRing llRing(int from, int to) const;

  [[nodiscard]] Control& control() const { return *reinterpret_cast<Control*>(ctrl_.data()); }
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
    Waiting(const ShmExecutor& ex, std::int32_t code) : info_(ex.info(ex.rank_)) { info_.waitingFor.store(code, std::memory_order_release); }
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
  [[nodiscard]] Culprit culprit(int peer) const;
  // The lost ranks, except this one (a rank that was stopped and resumes does not blame itself).
  [[nodiscard]] std::vector<int> othersLost() const;
  [[nodiscard]] RankInfo& info(int r) const;
  // Counts this rank as joined, waits (until `deadline`) for every rank of the node, then removes the
  // names of the segments this rank created: from then on no file is left behind, however it ends.
  void joinAndUnlink(Clock::time_point deadline);
  [[nodiscard]] SharedWord& arrived(int r) const { return info(r).arrived; }
  // False once rank r joined and its process has died (a SIGKILL, a crash).
  [[nodiscard]] bool alive(int r) const;
  [[nodiscard]] Channel& channel(int from, int to) const;
  // Blames `lost` (the ranks a timeout found missing), sets the abort word and wakes every waiter.
  void fail(const std::vector<int>& lost);
  [[nodiscard]] std::vector<int> lostRanks() const;
  // The ranks that have not started call number `call`.
  [[nodiscard]] std::vector<int> lateRanks(std::uint32_t call) const;

  // Global rank of local index i, and the local index of global rank g (-1: off this node).
  [[nodiscard]] int globalOf(int local) const { return global_[static_cast<std::size_t>(local)]; }
  [[nodiscard]] int localOf(int global) const { return local_[static_cast<std::size_t>(global)]; }
  [[nodiscard]] std::vector<int> globalOf(const std::vector<int>& locals) const;

  int rank_;     // local index on this node
  int nranks_;   // ranks on this node
  int jobRanks_;
  std::vector<int> global_, local_;
  RemoteLinks* remote_ = nullptr;
  ShmSegment ctrl_;                 // rank 0 owns it; the others attach
  ShmSegment own_;                  // this rank's buffers
  std::vector<ShmSegment> peers_;   // peers_[r]: rank r's buffers (empty for this rank)
  std::vector<std::byte*> bases_;   // bases_[r]: rank r's buffers as mapped here
  std::int64_t llRingLines_ = 0;    // 0: no LL rings on this node
  std::size_t llOffset_ = 0;        // where the LL words start in the control segment
  // This rank's private LL positions (units), per local peer: written to (peer), read from (peer).
  std::vector<LlLink<SharedWord>> llTo_, llFrom_;
  std::vector<LlLink<SharedWord>*> llSent_, llRead_;  // LlRun's, kept between calls
  std::vector<std::byte> llIncoming_;
  plan::RunnerState<plan::NoLaneData> llRunner_;
  plan::RunnerState<plan::NoLaneData> slotRunner_;  // RankRun's, kept between calls (no allocation per call)
};

}  // namespace cclab::proc
