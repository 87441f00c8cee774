// The Communicator interface every backend implements (host threads, processes, CUDA, NCCL), with
// MPI/NCCL semantics, and the memory it hands out (Buffer). Backends derive from it here, below the
// API header (collectives/communicator.h: the backend factory), so that no backend includes the API.
//
// Each rank calls a collective on its own buffers (`run`, the calling thread acts as that rank), or one
// host thread drives every rank at once (`runGroup`, as nccl-tests' -g). Counts and in-place layouts:
// collectives/call/vocabulary.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "collectives/call/vocabulary.h"
#include "collectives/core/errors.h"
#include "collectives/plan/plan.h"

namespace cclab {

// Memory a rank can use: host memory, or the device memory of the rank's GPU. Owns it (RAII).
class Buffer {
 public:
  Buffer() = default;
  Buffer(void* ptr, std::size_t bytes, std::function<void(void*)> release)
      : ptr_(ptr), bytes_(bytes), release_(std::move(release)) {}
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (ptr_ && release_) release_(ptr_);
  }
  [[nodiscard]] void* data() const { return ptr_; }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  void swap(Buffer& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    std::swap(release_, o.release_);
  }
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  std::function<void(void*)> release_;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  [[nodiscard]] virtual Backend backend() const = 0;
  [[nodiscard]] virtual int nranks() const = 0;
  // One line for table headers: "host: 4 ranks as threads", "cuda: 8 ranks on 1 x NVIDIA H200 ...".
  [[nodiscard]] virtual std::string description() const = 0;
  // The ranks this process drives: every rank, except in the process backend (its own rank only).
  // runGroup takes one buffer pair per local rank, in this order.
  [[nodiscard]] virtual std::vector<int> localRanks() const;
  // Where each rank runs, for the "Using devices" block ("pid 4242 on host node 0"); empty: not known.
  [[nodiscard]] virtual std::vector<std::string> rankLocations() const { return {}; }
  // A value combined over the processes of the job (every process must call, in the same order);
  // the identity when one process drives every rank.
  [[nodiscard]] virtual double maxOverProcesses(double v) const { return v; }
  [[nodiscard]] virtual std::int64_t sumOverProcesses(std::int64_t v) const { return v; }
  // Whether this process prints the job's report (only rank 0's process under mpirun).
  [[nodiscard]] virtual bool printsReport() const { return true; }
  // The largest buffer (bytes) one rank's call can ever take; a tool refuses larger sizes before it
  // allocates anything. nullopt: only memory bounds it (proc: half of each rank's shared segment).
  [[nodiscard]] virtual std::optional<std::size_t> maxBufferBytes() const { return std::nullopt; }

  // Per-rank call: the calling thread acts as `rank`. Host: returns when this rank's part is done.
  // CUDA/NCCL: returns when it is enqueued on the rank's stream (see synchronize()).
  virtual void run(int rank, const CollectiveArgs& args, RankBuffers buffers, const CollectiveOptions& options) = 0;
  // Group call: one thread drives all ranks; buffers[r] belongs to rank r.
  virtual void runGroup(const CollectiveArgs& args, std::span<const RankBuffers> buffers,
                        const CollectiveOptions& options) = 0;
  // Waits for all enqueued work (no-op on the host backend).
  virtual void synchronize() {}
  // Waits for the work enqueued on `rank`'s stream only (CUDA: ranks that share a device stream, as
  // the graph and ll orderings do, wait for each other's too); the default waits for everything.
  virtual void synchronizeRank(int rank) {
    (void)rank;
    synchronize();
  }
  // The native stream (a cudaStream_t) that orders `rank`'s collectives: work enqueued on it before a
  // call runs before the call, work enqueued after it runs after the call. nullptr on backends without
  // streams (host, proc).
  [[nodiscard]] virtual void* rankStream(int rank) const {
    (void)rank;
    return nullptr;
  }

  // Arrival times of the collectives since the last reset (see ArrivalStats); nullopt when this backend
  // does not record them (CUDA, NCCL). Read and reset between calls, not while one runs.
  [[nodiscard]] virtual std::optional<ArrivalStats> arrivalStats() const { return std::nullopt; }
  virtual void resetArrivalStats() {}

  // Memory for rank `rank` (device memory on GPU backends), and copies between it and host memory.
  virtual Buffer allocate(int rank, std::size_t bytes) = 0;
  virtual void copyToRank(int rank, void* dst, const void* hostSrc, std::size_t bytes) = 0;
  virtual void copyFromRank(int rank, void* hostDst, const void* src, std::size_t bytes) = 0;
  // Sets `bytes` of rank memory to zero where it lives (a device memset on GPU backends: no host copy).
  virtual void zeroOnRank(int rank, void* dst, std::size_t bytes) = 0;

  // The algorithm a call will use: `requested`, or auto's choice (collectives/call/auto_rule.h).
  [[nodiscard]] virtual plan::Algorithm resolve(const CollectiveArgs& args, plan::Algorithm requested) const;

  // Convenience wrappers over run().
  void allReduce(int rank, const void* send, void* recv, std::int64_t count, DataType t, ReduceOp op,
                 const CollectiveOptions& o = {});
  void reduceScatter(int rank, const void* send, void* recv, std::int64_t recvCount, DataType t, ReduceOp op,
                     const CollectiveOptions& o = {});
  void allGather(int rank, const void* send, void* recv, std::int64_t sendCount, DataType t,
                 const CollectiveOptions& o = {});
  void broadcast(int rank, const void* send, void* recv, std::int64_t count, DataType t, int root,
                 const CollectiveOptions& o = {});
  void reduce(int rank, const void* send, void* recv, std::int64_t count, DataType t, ReduceOp op, int root,
              const CollectiveOptions& o = {});
};

}  // namespace cclab
