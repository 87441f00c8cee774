// The process backend's links between nodes: proc::RemoteLinks over MPI point-to-point, so that a
// node's ShmExecutor moves slices within the node through shared memory and to other nodes through
// MPI (tag = plan channel: MPI's non-overtaking order is the plan's FIFO per (channel, from, to)).
#pragma once

#include <vector>

#include "collectives/mpi/mpi_world.h"
#include "collectives/proc/shm_executor.h"

namespace cclab::mpi {

class MpiLinks final : public proc::RemoteLinks {
 public:
  explicit MpiLinks(const World& world) : world_(world) {}
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
  const World& world_;
  std::vector<Send> sends_;
  long long messages_ = 0;
};

}  // namespace cclab::mpi
