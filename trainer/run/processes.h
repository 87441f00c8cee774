// A run whose ranks live in several processes (the proc backend under mpirun: one rank per process).
// The workers of this process are its Communicator's local ranks; what the rest of the run needs from
// the others (the epoch's loss, every rank's step records and arrivals, a common clock) travels
// through the same Communicator (the trainer's only way to its peers) as allgathers of bytes. When one
// process drives every rank (host, cuda, nccl) nothing travels and every call is the identity.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "collectives/communicator.h"
#include "trainer/run/clock.h"

namespace cclab::trainer {

class ProcessGroup {
 public:
  // Throws InvalidArgument when a process drives some but not all ranks and more than one (not built).
  explicit ProcessGroup(Communicator& comm, std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // Some rank lives in another process.
  [[nodiscard]] bool spansProcesses() const { return spans_; }
  // This process's ranks (every rank when it drives them all).
  [[nodiscard]] const std::vector<int>& localRanks() const { return local_; }

  // Every process's bytes, indexed by rank (in one process: just `mine`). Every process must call it,
  // in the same order; the sizes may differ.
  [[nodiscard]] std::vector<std::vector<std::byte>> allGather(std::span<const std::byte> mine) const;

  // Every process's values of a trivially copyable type, concatenated in rank order.
  template <typename T>
  [[nodiscard]] std::vector<T> concat(std::span<const T> mine) const {
    static_assert(std::is_trivially_copyable_v<T>);
    if (!spans_) return {mine.begin(), mine.end()};
    std::vector<T> all;
    for (const std::vector<std::byte>& bytes : allGather(std::as_bytes(mine))) {
      const std::size_t n = bytes.size() / sizeof(T);
      all.resize(all.size() + n);
      if (n) std::memcpy(all.data() + all.size() - n, bytes.data(), n * sizeof(T));
    }
    return all;
  }
  template <typename T>
  [[nodiscard]] std::vector<T> concat(const std::vector<T>& mine) const {
    return concat(std::span<const T>(mine));
  }

  // A clock every process reads alike: processes on one host take rank 0's origin (the monotonic
  // clock is the host's, so arrivals compare exactly); across hosts each takes its own origin at the
  // end of the same allgather (off by that call's exit skew, microseconds).
  [[nodiscard]] RunClock commonClock() const;

 private:
  Communicator& comm_;
  CollectiveOptions options_;
  std::vector<int> local_;
  bool spans_ = false;
};

}  // namespace cclab::trainer
