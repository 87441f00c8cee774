// The vocabulary of a collective call, below every executor and backend: which collective on which
// data (CollectiveArgs), how (CollectiveOptions), a rank's buffers (RankBuffers), what an executor is
// told per call (RunOptions), the backends' names, and the arrival statistics. Executors, backends and
// the API (collectives/communicator.h) all speak it; it depends on core and plan only.
//
// Counts follow NCCL's API:
//   allReduce(count): in = out = count        reduceScatter(count): in = nranks*count, out = count
//   allGather(count): in = count, out = nranks*count     broadcast/reduce(count, root): in = out = count
// In place means NCCL's layout: send == recv, except allGather (send == recv + rank*count) and
// reduceScatter (recv == send + rank*count).
//
// A rank's buffers have one vocabulary, from the caller down to the device:
//   RankBuffers {send, recv}           the caller's pair, untyped (the API)
//   host::RankMemory {input, output, scratch}, bytes in host memory (the host, shared-memory and MPI
//                                      executors), indexed by plan::Buf
//   cuda::RankPointers base[plan::Buf] the same three on a device (the CUDA orderings)
//   plan::RankBuffers<T>               the same three, typed (the single-thread interpreter)
//   bench::RankAllocations             not a rank's buffers but the memory every rank owns for a
//                                      run, from which each call's RankBuffers are cut
// send is the plan's Input, recv its Output; scratch is the executor's own.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/core/dtype.h"
#include "collectives/core/straggler.h"
#include "collectives/plan/plan.h"

namespace cclab {

// Proc: one rank per process, launched by mpirun (collectives/proc/proc_communicator.h).
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

struct RankBuffers {
  const void* send = nullptr;
  void* recv = nullptr;
};

// What an executor that runs plans on host memory is told per call (the host slot and LL executors,
// the shared-memory executor, the MPI executor): one struct, each executor reading the fields it has.
struct RunOptions {
  std::size_t elemSize = 4;
  ReduceFn reduce = nullptr;    // dst = local (op) received
  std::int64_t sliceElems = 0;  // 0: whole ops (MPI: a slice must fit in an int of bytes, MPI's count)
  std::chrono::nanoseconds timeout = std::chrono::seconds(30);
  // Busy phase of a wait before it yields or sleeps (shared-memory and MPI executors; the host
  // executors take theirs when they are made).
  std::chrono::nanoseconds spin = std::chrono::microseconds(50);
  std::chrono::nanoseconds startDelay{0};  // straggler: this rank arrives late (host executors)
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

}  // namespace cclab
