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
// This is the within-a-node smoke path of issue 12: no MPI bootstrap (the ranks agree on the job id
// and the sizes beforehand, e.g. by fork), no Communicator backend yet.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectives/core/dtype.h"
#include "collectives/plan/plan.h"
#include "collectives/proc/shared_wait.h"
#include "collectives/proc/shm_segment.h"

namespace cclab::proc {

struct ShmRunOptions {
  std::size_t elemSize = 4;
  ReduceFn reduce = nullptr;    // dst = local (op) received
  std::int64_t sliceElems = 0;  // 0: whole ops
  std::chrono::nanoseconds timeout = std::chrono::seconds(30);
  std::chrono::nanoseconds spin = std::chrono::microseconds(50);
};

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

class ShmExecutor {
 public:
  static constexpr std::uint32_t kSlots = 16;
  static constexpr int kMaxRanks = 256;
  static constexpr std::chrono::milliseconds kLivenessCheck{100};
  static constexpr std::chrono::microseconds kProgressRound{50};  // RemoteLinks::progress this often in a wait

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

  [[nodiscard]] Control& control() const { return *reinterpret_cast<Control*>(ctrl_.data()); }
  // Per rank, in the control segment: its arrival counter and who it is (so peers notice its death).
  struct alignas(64) RankInfo {
    SharedWord arrived;                    // calls this rank has started
    std::atomic<std::int32_t> pid;         // 0 until the rank joined
    std::atomic<std::uint64_t> startTime;  // stale_sweep.h's processStartTime of that pid
  };
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
};

}  // namespace cclab::proc
