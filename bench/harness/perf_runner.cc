#include "bench/harness/perf_runner.h"

#include <algorithm>
#include <barrier>
#include <exception>
#include <thread>
#include <chrono>
#include <optional>

#include "bench/report/common_flags.h"

namespace cclab::bench {

using plan::isRooted;
using plan::reduces;

PerfRunner::PerfRunner(Communicator& comm, plan::Collective collective, const HarnessOptions& options)
    : comm_(comm), collective_(collective), options_(options), arrivals_(comm.backend()) {
  callOptions_.algorithm = options.comm.algorithm;
  callOptions_.sliceBytes = static_cast<std::size_t>(options.comm.sliceBytes);
  callOptions_.timeout = options.comm.timeout;
  callOptions_.straggler = options.comm.straggler;
  callOptions_.channels = options.comm.channels;
  callOptions_.ranksPerNode = options.comm.ranksPerNode.value_or(0);
}

void PerfRunner::run(const TablePrinter& table, ResultLog& log) {
  const RunBuffers largest = largestBuffers(collective_, options_.sweep.maxBytes, options_.data.types, comm_.nranks());
  const std::size_t stagingBytes = options_.iteration.check ? std::max(largest.sendBytes, largest.recvBytes) : 0;
  memory_ = std::make_unique<RunMemory>(RunMemory{
      RankAllocations(comm_, std::max<std::size_t>(largest.sendBytes, 1), std::max<std::size_t>(largest.recvBytes, 1)),
      HostStaging(stagingBytes)});

  const std::vector<std::int64_t> sizes = sizesOf(options_.sweep);
  const std::vector<ReduceOp> noOp{ReduceOp::Sum};
  for (DataType type : options_.data.types)
    for (ReduceOp op : reduces(collective_) ? options_.data.ops : noOp) {
      const CollectiveArgs args{collective_, 0, type, op, isRooted(collective_) ? options_.data.root : 0};
      for (std::int64_t bytes : sizes) {
        ResultRow row = measureSize(args, bytes);
        table.row(row);
        log.add(std::move(row));
      }
    }
  memory_.reset();
}

ResultRow PerfRunner::measureSize(const CollectiveArgs& base, std::int64_t bytes) {
  const CollectiveShape shape = shapeOf(collective_, bytes, sizeOf(base.type), comm_.nranks());
  CollectiveArgs args = base;
  args.count = shape.count;
  ResultRow row;
  row.sizeBytes = shape.sizeBytes;
  row.count = shape.count;
  row.type = std::string(name(args.type));
  row.redop = reduces(collective_) ? std::string(name(args.op)) : "none";
  row.root = isRooted(collective_) ? args.root : -1;
  row.outOfPlace = measure(args, shape, false);
  row.inPlace = measure(args, shape, true);
  return row;
}

Measurement PerfRunner::measure(const CollectiveArgs& args, const CollectiveShape& shape, bool inPlace) {
  const IterationOptions& it = options_.iteration;
  const ReferenceCheck reference(args, shape, comm_.nranks(), seed_++);
  if (it.check) reference.writeInputs(comm_, memory_->ranks, inPlace, memory_->staging);
  const double seconds = runCalls(args, shape, inPlace, it.warmupAt(shape.sizeBytes), it.itersAt(shape.sizeBytes));
  const conventions::Bandwidth bw = conventions::bandwidthOf(collective_, comm_.nranks(), shape.sizeBytes, seconds);
  Measurement m{seconds * 1e6, bw.algBw, bw.busBw, std::nullopt};
  if (it.check) {
    // The timed calls may have changed the inputs (in place): start again from fresh data.
    reference.writeInputs(comm_, memory_->ranks, inPlace, memory_->staging);
    if (options_.threads > 1)
      (void)runOnThreads(args, groupBuffers(args, shape, inPlace), 0, 1);  // the path that was timed
    else
      comm_.runGroup(args, groupBuffers(args, shape, inPlace), callOptions_);
    comm_.synchronize();
    m.wrong = reference.countWrongOutputs(comm_, memory_->ranks, inPlace, memory_->staging);
  }
  return m;
}

std::vector<RankBuffers> PerfRunner::groupBuffers(const CollectiveArgs& args, const CollectiveShape& shape,
                                                  bool inPlace) const {
  std::vector<RankBuffers> buffers;  // one per local rank, in localRanks() order (runGroup's contract)
  for (int r : comm_.localRanks()) buffers.push_back(memory_->ranks.buffersFor(r, collective_, shape, sizeOf(args.type), inPlace));
  return buffers;
}

double PerfRunner::runCalls(const CollectiveArgs& args, const CollectiveShape& shape, bool inPlace, int warmup, int iters) {
  const std::vector<RankBuffers> buffers = groupBuffers(args, shape, inPlace);
  if (options_.threads > 1) {
    const double seconds = runOnThreads(args, buffers, warmup, iters * options_.iteration.aggIters);
    arrivals_.add(comm_.arrivalStats());
    return seconds / (static_cast<double>(iters) * options_.iteration.aggIters);
  }
  for (int i = 0; i < warmup; ++i) comm_.runGroup(args, buffers, callOptions_);
  comm_.synchronize();
  comm_.resetArrivalStats();
  (void)comm_.maxOverProcesses(0.0);  // every process starts its clock after every warm-up ended
  const int agg = options_.iteration.aggIters;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i)
    for (int a = 0; a < agg; ++a) comm_.runGroup(args, buffers, callOptions_);
  comm_.synchronize();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  arrivals_.add(comm_.arrivalStats());
  // Processes time their own ranks; the call took as long as the slowest (nccl-tests under MPI).
  return comm_.maxOverProcesses(elapsed.count()) / (static_cast<double>(iters) * agg);
}

double PerfRunner::runOnThreads(const CollectiveArgs& args, const std::vector<RankBuffers>& buffers, int warmup,
                                int calls) {
  const auto n = static_cast<std::ptrdiff_t>(buffers.size());
  // Once every thread has warmed up (or dropped out), before any timed call: the arrival report
  // covers the timed calls only, as with group calls.
  const auto warmedUp = [this]() noexcept { comm_.resetArrivalStats(); };
  std::barrier started(n, warmedUp);
  std::vector<double> seconds(buffers.size(), 0.0);
  std::vector<std::exception_ptr> errors(buffers.size());
  const std::vector<int> ranks = comm_.localRanks();
  const auto body = [&](std::size_t i) {
    bool arrived = false;
    try {
      for (int w = 0; w < warmup; ++w) comm_.run(ranks[i], args, buffers[i], callOptions_);
      started.arrive_and_wait();
      arrived = true;
      const auto start = std::chrono::steady_clock::now();
      for (int c = 0; c < calls; ++c) comm_.run(ranks[i], args, buffers[i], callOptions_);
      seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } catch (...) {
      errors[i] = std::current_exception();
      if (!arrived) started.arrive_and_drop();  // the others' barrier completes without this thread
    }
  };
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 1; i < buffers.size(); ++i) threads.emplace_back(body, i);
    body(0);  // the calling thread drives rank 0
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return combineTimes(options_.iteration.average, seconds);  // -a, as nccl-tests combines its threads' times
}

}  // namespace cclab::bench
