#include "trainer/sync/comm_thread.h"

#include <utility>

namespace cclab::trainer {

CommThread::CommThread(GradientExchange& exchange, int rank, const RunClock& clock, bool trace)
    : exchange_(exchange), rank_(rank), clock_(clock), trace_(trace), inline_(exchange.nranks() == 1) {
  if (!inline_) thread_ = std::thread([this] { loop(); });
}

CommThread::~CommThread() { stop(); }

void CommThread::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CommThread::beginStep(int epoch, std::int64_t step) {
  std::lock_guard lock(mutex_);
  epoch_ = epoch;
  stepInEpoch_ = step;
  nextBucket_ = 0;
}

void CommThread::submit(const Bucket& bucket, std::span<float> grads, std::int64_t step) {
  Job job;
  {
    std::lock_guard lock(mutex_);
    job = {grads.subspan(static_cast<std::size_t>(bucket.offset), static_cast<std::size_t>(bucket.count)),
           bucket.offset, step, epoch_, stepInEpoch_, nextBucket_++};
    ++submitted_;
    if (!inline_) queue_.push_back(job);
  }
  if (inline_) {
    reduce(job);
    return;
  }
  changed_.notify_all();
}

std::int64_t CommThread::waitAll() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return completed_ == submitted_ || error_; });
  if (error_) std::rethrow_exception(error_);
  return std::exchange(busyNs_, 0);
}

void CommThread::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop requested and nothing left
      job = queue_.front();
      queue_.pop_front();
    }
    try {
      reduce(job);
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
      queue_.clear();
      changed_.notify_all();
      return;
    }
    changed_.notify_all();
  }
}

void CommThread::reduce(const Job& job) {
  const std::int64_t start = clock_.nowNs();
  exchange_.allReduceSum(rank_, job.data, job.offset);
  const std::int64_t end = clock_.nowNs();
  trace_.add("allreduce bucket", commTrack(rank_), start, end, job.step);
  std::lock_guard lock(mutex_);
  if (!inline_) {  // one rank: nothing is communicated
    busyNs_ += end - start;
    reducedElements_ += static_cast<std::int64_t>(job.data.size());
    arrivals_.push_back({job.epoch, job.stepInEpoch, job.bucket, rank_, start, end});
  }
  ++completed_;
}

}  // namespace cclab::trainer
