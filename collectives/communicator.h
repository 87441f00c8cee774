// The Communicator: one API for every backend (host threads, CUDA, NCCL), with MPI/NCCL semantics.
//
// Each rank calls a collective on its own buffers (`run`, the calling thread acts as that rank), or one
// host thread drives every rank at once (`runGroup`, as nccl-tests' -g). Counts follow NCCL's API:
//   allReduce(count): in = out = count        reduceScatter(count): in = nranks*count, out = count
//   allGather(count): in = count, out = nranks*count     broadcast/reduce(count, root): in = out = count
// In place means NCCL's layout: send == recv, except allGather (send == recv + rank*count) and
// reduceScatter (recv == send + rank*count).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collectives/core/dtype.h"
#include "collectives/core/errors.h"
#include "collectives/core/straggler.h"
#include "collectives/plan/plan.h"

namespace cclab {

// Proc: one rank per process, launched by mpirun (collectives/mpi/proc_communicator.h).
enum class Backend : std::uint8_t { Host, Cuda, Nccl, Proc };
std::string_view name(Backend b);
Backend parseBackend(std::string_view s);  // "host", "cuda", "nccl", "proc"; throws InvalidArgument


// Per-call options, in the shape of gloo's AllreduceOptions.
struct CollectiveOptions {
  plan::Algorithm algorithm = plan::Algorithm::Auto;
  std::size_t sliceBytes = 0;  // pipeline slice; 0: the backend's default
  std::chrono::milliseconds timeout{30000};
  Straggler straggler;  // executors honour startDelay (the rank arrives late at every collective)
  // The plan's shape (plan::PlanShape): channels 1..plan::kMaxChannels, 0 = the backend's default;
  // ranksPerNode = consecutive ranks that share a node (0: one node; the host backend emulates nodes:
  // it only changes the plan, e.g. hier's rings and the ring channels' orders). hier needs it to divide
  // nranks. Backends that build plans key their plan caches on both.
  int channels = 0;
  int ranksPerNode = 0;
};

struct CollectiveArgs {
  plan::Collective collective = plan::Collective::AllReduce;
  std::int64_t count = 0;  // NCCL's meaning, see above
  DataType type = DataType::Float32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;  // broadcast, reduce
};

// When each rank arrived at the collectives since the last resetArrivalStats() (backends that record
// arrivals: the host backend). A rank arrives when its thread enters the call, after any straggler
// start delay, i.e. when it is ready to communicate; all arrivals are read on one steady clock. A
// rank's lateness in a call is its arrival minus the earliest arrival in that call (0 for the first).
struct RankArrivals {
  std::int64_t calls = 0;          // calls this rank's arrival was counted in
  std::chrono::nanoseconds totalLateness{0};
  std::chrono::nanoseconds maxLateness{0};
  std::int64_t lastCount = 0;      // calls in which this rank arrived last (ties: the lowest rank)

  [[nodiscard]] double meanLatenessUs() const;  // 0 without calls
  [[nodiscard]] double lastShare() const;       // lastCount / calls; 0 without calls
};

struct ArrivalStats {
  std::int64_t calls = 0;           // calls every rank arrived at (each counted once)
  std::vector<RankArrivals> ranks;  // ranks[r]: rank r
  // Recording stopped before the end: the host backend holds a window of calls in flight (2 x nranks
  // + 64), and ranks that ran more calls apart than that (per-rank run() calls only; a group call
  // ends every rank's call) lost their later arrivals. Until the next reset, nothing more is counted.
  bool incomplete = false;
};

struct RankBuffers {
  const void* send = nullptr;
  void* recv = nullptr;
};

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

  // The algorithm a call will use: `requested`, or auto's choice (see docs/collectives.md).
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

// auto's rule, shared by all backends (documented in docs/collectives.md): allreduce messages up to
// kAutoTinyBytes use recursive doubling (log2 p steps, whole vectors), up to kAutoSmallBytes on more
// than two ranks recursive halving-doubling (2·log2 p steps, halving volumes), larger ones the ring
// (bandwidth-optimal); other collectives use their ring/chain. Thresholds from host measurements at
// 4 ranks (docs/results/cpu-peers.md): rd beats rhd up to 16 KiB, rhd beats the ring up to 64 KiB.
inline constexpr std::size_t kAutoTinyBytes = 16 * 1024;
inline constexpr std::size_t kAutoSmallBytes = 64 * 1024;
plan::Algorithm autoAlgorithm(const CollectiveArgs& args, int nranks);

// On the host backend small allreduces run on the LL path (collectives/host/ll_path.h), where a
// one-step algorithm beats the rule above: auto takes oneshot up to `oneshotBytes` and twoshot up to
// `twoshotBytes` (largest buffer), at the row of the largest measured rank count <= nranks; above
// the last row's rank count, above these sizes and on other backends (the table was measured on the
// host's LL path only) the rule above. Both sizes stay within the LL threshold (kLlDefaultMaxBytes), so
// these calls never reach the slot executor. Measured on this repository's 2-core machine with
// `CCLAB_BIND_RANKS=1 nice -n -20 bench/ll_crossover --ranks 2 3 4 8 --max 16K --rounds 3`
// (docs/results/cpu-peers.md, "Small messages: the LL path", 2026-12-03): oneshot up to the largest
// size up to which it stayed within 25% of the fastest of the 7 columns (oneshot, twoshot, rd, rhd, ring
// on LL; rd, ring on the slots) at every size, then twoshot likewise. 0: never. The 4- and 8-rank
// rows (more ranks than this machine's 2 cores) were measured under a load average of 7-12 from other
// jobs and are noise-dominated; they keep the older rule but for twoshot at 8 ranks up to 16 B.
struct HostAutoSmallRow {
  int nranks;
  std::size_t oneshotBytes;
  std::size_t twoshotBytes;
};
inline constexpr HostAutoSmallRow kHostAutoSmall[] = {
    {2, 512, 512},
    {3, 64, 64},
    {4, 0, 0},
    {8, 0, 16},
};
// The process backend's small-allreduce table (same reading as kHostAutoSmall), for calls on its LL
// rings (collectives/proc/shm_ll.cc). Measured with `mpirun --oversubscribe -np N all_reduce_perf --algo
// A -b 8 -e 1K -f 2 -n 3000 -w 300` for A in rd, oneshot, twoshot, 2 rounds (docs/results/cpu-peers.md,
// "8-byte latency after the LL path for processes and shares", load average 3.5): at 2 ranks rd and
// oneshot tie (0.13-0.14 µs at 8 B), so rd stays; at 4 ranks (on 2 cores) oneshot, one step instead of
// rd's two, was fastest or within 25% of the fastest in both rounds up to 128 B (at 256 B 1.5x rd in
// one round). 4-rank cells moved 2-3x between rounds: remeasure on a quiet machine.
inline constexpr HostAutoSmallRow kProcAutoSmall[] = {
    {2, 0, 0},
    {4, 128, 0},
};
plan::Algorithm autoAlgorithm(const CollectiveArgs& args, int nranks, Backend backend);

// Throws InvalidArgument when args do not fit (negative count, root out of range, an algorithm the
// collective has no generator for, a rank out of range).
void checkArgs(const CollectiveArgs& args, int nranks, plan::Algorithm resolved);
// Throws InvalidArgument (one line) when options.channels is outside 0..plan::kMaxChannels,
// options.ranksPerNode is negative, or hier's ranksPerNode does not divide nranks.
void checkShape(const CollectiveOptions& options, int nranks, plan::Algorithm resolved);

// Most slices one call may cut a rank's largest buffer into. Every slice costs a handshake (about
// 100 ns on the host, a launch or an event on a GPU) and, on the CUDA backend, a lowered step held in
// memory, so a slice far smaller than the message turns one call into minutes of handshakes and
// gigabytes of steps (`--slice 1` on 1 GiB: 2^28 slices). 2^20 slices still let a 1 GiB message use
// 1 KiB slices; the default slices (256 KiB) reach the limit only beyond 256 GiB.
inline constexpr std::int64_t kMaxSlicesPerCall = std::int64_t{1} << 20;
// Throws InvalidArgument when `sliceBytes` (0: the backend's default, `defaultSliceBytes`) cuts the
// call's largest buffer into more than kMaxSlicesPerCall slices. Every backend calls it.
void checkSlicing(const CollectiveArgs& args, int nranks, std::size_t sliceBytes, std::size_t defaultSliceBytes);

// How the CUDA backend orders its steps: stream events, a captured CUDA graph, or the low-latency
// kernel (flags in device memory). One name table for parsing, help texts and errors.
enum class CudaOrder : std::uint8_t { Events, Graph, LowLatency };
inline constexpr CudaOrder kAllCudaOrders[] = {CudaOrder::Events, CudaOrder::Graph, CudaOrder::LowLatency};
std::string_view name(CudaOrder o);            // "events", "graph", "ll"
CudaOrder parseCudaOrder(std::string_view s);  // throws InvalidArgument listing the names
std::string cudaOrderNames();                  // "events, graph, ll"

struct CommConfig {
  int nranks = 1;  // the proc backend: ranks per process (only 1)
  CudaOrder order = CudaOrder::Events;  // CUDA backend only
};

bool backendAvailable(Backend b, std::string* why = nullptr);
// Throws InvalidArgument (bad nranks) or Error (backend not built or no device), with the reason.
std::unique_ptr<Communicator> makeCommunicator(Backend b, const CommConfig& config);

}  // namespace cclab
