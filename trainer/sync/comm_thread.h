// A worker's communication thread. The host backend's per-rank allreduce blocks its calling thread,
// so to overlap communication with the backward pass each worker hands its ready buckets to this
// thread, which issues the allreduces one at a time in submission order (the same order on every
// rank, as the Communicator requires) while the worker computes the next layers. With one rank
// there is nothing to overlap and no thread: submit() reduces (a no-op copy) on the caller's thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "trainer/metrics/records.h"
#include "trainer/metrics/trace.h"
#include "trainer/run/clock.h"
#include "trainer/sync/buckets.h"
#include "trainer/sync/gradient_exchange.h"

namespace cclab::trainer {

class CommThread {
 public:
  CommThread(GradientExchange& exchange, int rank, const RunClock& clock, bool trace);
  CommThread(const CommThread&) = delete;
  CommThread& operator=(const CommThread&) = delete;
  ~CommThread();

  // Names the step the next submit()s belong to (resets the bucket index).
  void beginStep(int epoch, std::int64_t step);
  // Queues the allreduce of grads[bucket.offset, +bucket.count).
  void submit(const Bucket& bucket, std::span<float> grads, std::int64_t step);
  // Blocks until every submitted bucket is reduced; returns the allreduce time since the previous
  // call. Rethrows the communication thread's failure.
  std::int64_t waitAll();
  // Joins the thread (idempotent); then trace() may be read.
  void stop();
  [[nodiscard]] TraceLog& trace() { return trace_; }
  // Every bucket's arrival and end on this rank (none with one rank); read after stop().
  [[nodiscard]] const std::vector<BucketArrival>& arrivals() const { return arrivals_; }
  // Gradient elements this rank handed to allreduces so far (0 with one rank); read after stop().
  [[nodiscard]] std::int64_t reducedElements() const { return reducedElements_; }

 private:
  struct Job {
    std::span<float> data;
    std::int64_t offset = 0;
    std::int64_t step = 0;  // global, for the trace
    int epoch = 0;
    std::int64_t stepInEpoch = 0;
    int bucket = 0;
  };
  void loop();
  void reduce(const Job& job);

  GradientExchange& exchange_;
  int rank_;
  const RunClock& clock_;
  TraceLog trace_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queue_;
  std::int64_t submitted_ = 0;
  std::int64_t completed_ = 0;
  std::int64_t busyNs_ = 0;
  std::int64_t reducedElements_ = 0;
  int epoch_ = 0;
  std::int64_t stepInEpoch_ = 0;
  int nextBucket_ = 0;
  std::vector<BucketArrival> arrivals_;
  std::exception_ptr error_;
  bool stop_ = false;
  bool inline_;
  std::thread thread_;
};

}  // namespace cclab::trainer
