// Persistent worker threads for group calls: worker r runs rank r's share of each job while the
// calling thread runs rank 0. Workers wait for the next job busy for a short while (back-to-back
// collectives, as in a benchmark loop, then start within a µs), then asleep on a futex.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "collectives/host/wait.h"

namespace cclab::host {

class WorkerPool {
 public:
  // body(r) runs rank r's part of the current job.
  WorkerPool(int nranks, std::function<void(int)> body, std::chrono::nanoseconds spin);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs body(r) for every rank (rank 0 on this thread), waits for all, rethrows the first failure.
  // Every body's waits are bounded, so this returns.
  void runAll();

 private:
  void loop(int rank);

  std::function<void(int)> body_;
  std::chrono::nanoseconds spin_;
  std::vector<std::exception_ptr> errors_;
  WaitWord generation_;  // bumped once per job
  WaitWord remaining_;   // workers still running the current job
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace cclab::host
