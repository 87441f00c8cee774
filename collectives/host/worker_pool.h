// Persistent worker threads for group calls: worker r runs rank r's share of each job while the
// calling thread runs rank 0. Workers wait for the next job busy for a short while (back-to-back
// collectives, as in a benchmark loop, then start within a µs), then asleep on a futex.
// The hand-off is one word each way per worker: the caller bumps `generation`; worker r stores that
// generation in its own done word (a cache line of its own) when it finishes. Nothing else is written
// per call on the way (no shared countdown, no busy flags), so a tiny group call costs the go and the
// done line transfers and nothing more; the first checks of each wait read no clock (a clock read is
// ~30 ns in a virtual machine, as long as the line transfer it waits for).
// runAll's wait for the workers has a deadline too (a Watchdog): when the job stops making progress
// for `patience`, it asks the job to abort, then waits for the workers to leave (they use the
// caller's buffers, so it cannot return before).
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "collectives/host/wait.h"

namespace cclab::host {

// How runAll notices a job that stopped moving and ends it.
struct Watchdog {
  std::chrono::nanoseconds patience{0};          // 0: wait for the workers without a deadline
  std::function<std::uint64_t()> progress;       // grows while the job advances
  std::function<void(const std::vector<int>&)> abort;  // ends the job's waits; gets the ranks still running
};

class WorkerPool {
 public:
  // body(r) runs rank r's part of the current job.
  WorkerPool(int nranks, std::function<void(int)> body, std::chrono::nanoseconds spin);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs body(r) for every rank (rank 0 on this thread), waits for all, rethrows the first failure.
  // Every body's waits are bounded; should the job still stall (no progress for watchdog.patience
  // after rank 0 returned), watchdog.abort is called once and the workers are then waited for.
  // rank0Completes: the job is over once body(0) returns normally (a gathered LL call, ll_executor.h:
  // the workers touch nothing of it after their last message, which rank 0 has read), so runAll returns
  // without waiting for their done words; a worker cannot lag a generation behind, as rank 0 needed its
  // message. When body(0) throws, runAll waits for the workers (watchdog and all) as for any job.
  void runAll(const Watchdog& watchdog = {}, bool rank0Completes = false);

 private:
  void loop(int rank);
  void waitForWorkers(const Watchdog& watchdog, std::uint32_t generation);
  [[nodiscard]] std::vector<int> running(std::uint32_t generation) const;

  std::function<void(int)> body_;
  std::chrono::nanoseconds spin_;
  std::vector<std::exception_ptr> errors_;  // errors_[r]: written by rank r only when its body throws
  WaitWord generation_;  // bumped once per job
  std::atomic<bool> stop_{false};
  std::unique_ptr<WaitWord[]> done_;  // done_[r]: the last generation worker r finished
  std::vector<std::thread> threads_;
};

}  // namespace cclab::host
