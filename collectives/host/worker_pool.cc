#include "collectives/host/worker_pool.h"

namespace cclab::host {
namespace {
// Workers idle between jobs; there is nothing to time out on, so they re-arm their wait this often.
constexpr std::chrono::hours kIdleRearm{1};
}  // namespace

WorkerPool::WorkerPool(int nranks, std::function<void(int)> body, std::chrono::nanoseconds spin)
    : body_(std::move(body)), spin_(spin), errors_(static_cast<std::size_t>(nranks)) {
  for (int r = 1; r < nranks; ++r) threads_.emplace_back([this, r] { loop(r); });
}

WorkerPool::~WorkerPool() {
  stop_.store(true, std::memory_order_release);
  generation_.wakeAll();
  for (auto& t : threads_) t.join();
}

void WorkerPool::runAll() {
  for (auto& e : errors_) e = nullptr;
  const auto workers = static_cast<std::uint32_t>(threads_.size());
  remaining_.value.store(workers, std::memory_order_relaxed);
  generation_.store(generation_.value.load(std::memory_order_relaxed) + 1);  // releases errors_ and remaining_
  try {
    body_(0);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  const std::atomic<bool> never{false};
  while (waitUntil(remaining_, [](std::uint32_t v) { return v == 0; }, never, Clock::now() + kIdleRearm, spin_) !=
         WaitResult::Ready) {
  }
  for (auto& e : errors_)
    if (e) std::rethrow_exception(e);
}

void WorkerPool::loop(int rank) {
  std::uint32_t seen = 0;
  for (;;) {
    const auto r = waitUntil(generation_, [seen](std::uint32_t v) { return v != seen; }, stop_,
                             Clock::now() + kIdleRearm, spin_);
    if (r == WaitResult::Aborted) return;
    if (r == WaitResult::TimedOut) continue;
    seen = generation_.value.load(std::memory_order_acquire);
    try {
      body_(rank);
    } catch (...) {
      errors_[static_cast<std::size_t>(rank)] = std::current_exception();
    }
    const std::uint32_t left = remaining_.value.fetch_sub(1, std::memory_order_acq_rel) - 1;
    if (left == 0 && remaining_.sleepers.load(std::memory_order_seq_cst) != 0) remaining_.wakeAll();
  }
}

}  // namespace cclab::host
