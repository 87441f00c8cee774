// The process backend's links between nodes: proc::RemoteLinks over MPI point-to-point, so that a
// node's ShmExecutor moves slices within the node through shared memory and to other nodes through
// MPI (tag = plan channel: MPI's non-overtaking order is the plan's FIFO per (channel, from, to)).
//
// With K ranks per process (the process backend's -g K: global rank g is local rank g % K of MPI
// process g / K) each rank has its own links; the tag is then (channel, sender's k, receiver's k), so
// the FIFO still holds per pair of ranks, and every MPI call takes `serialize` (MPI runs
// MPI_THREAD_SERIALIZED: the K rank threads of a process call it one at a time).
#pragma once

#include <mutex>
#include <vector>

#include "collectives/mpi/mpi_world.h"
#include "collectives/proc/shm_executor.h"

namespace cclab::mpi {

class MpiLinks final : public proc::RemoteLinks {
 public:
  explicit MpiLinks(const World& world) : world_(world) {}
  // Links of local rank `localRank` of `ranksPerProcess` (> 1: `serialize` may not be null).
  MpiLinks(const World& world, int ranksPerProcess, int localRank, std::mutex* serialize)
      : world_(world), k_(ranksPerProcess), local_(localRank), serialize_(serialize) {}
  // The largest tag a K-rank process needs (channels x K x K); the caller checks it against MPI_TAG_UB.
  [[nodiscard]] static long long maxTag(int ranksPerProcess);
  void send(int peer, int channel, const std::byte* src, std::size_t bytes) override;
  Wait receive(int peer, int channel, std::byte* dst, std::size_t bytes, std::chrono::steady_clock::time_point deadline,
               const std::function<bool()>& stop) override;
  Wait sent(const std::byte* begin, std::size_t bytes, std::chrono::steady_clock::time_point deadline,
            const std::function<bool()>& stop, int& peer) override;
  bool progress() override;
  // Messages sent so far (tests: what crossed between nodes).
  [[nodiscard]] long long messagesSent() const { return messages_; }
  // Without waiting: completes finished sends (true if any did), and names in `peer` the receiver of a
  // send from [begin, begin + bytes) still in flight (bytes = SIZE_MAX: of any send); false if none is.
  bool prune();
  bool inFlight(const std::byte* begin, std::size_t bytes, int& peer) const;
  [[nodiscard]] std::size_t sendsInFlight() const { return sends_.size(); }

 private:
  struct Send {
    const std::byte* begin;
    const std::byte* end;
    MPI_Request request;
    int peer;
  };
  [[nodiscard]] int tag(int channel, int fromK, int toK) const { return (channel * k_ + fromK) * k_ + toK; }
  [[nodiscard]] std::unique_lock<std::mutex> lockMpi() const {
    return serialize_ ? std::unique_lock<std::mutex>(*serialize_) : std::unique_lock<std::mutex>();
  }
  const World& world_;
  int k_ = 1;       // ranks per process
  int local_ = 0;   // this rank's k
  std::mutex* serialize_ = nullptr;
  std::vector<Send> sends_;
  long long messages_ = 0;
};

}  // namespace cclab::mpi
