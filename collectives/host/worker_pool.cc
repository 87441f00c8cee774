// WorkerPool: the persistent workers of group calls and runAll's bounded wait for them.
#include "collectives/host/worker_pool.h"

namespace cclab::host {
namespace {
// Workers idle between jobs; there is nothing to time out on, so they re-arm their wait this often.
constexpr std::chrono::hours kIdleRearm{1};
}  // namespace

WorkerPool::WorkerPool(int nranks, std::function<void(int)> body, std::chrono::nanoseconds spin)
    : body_(std::move(body)), spin_(spin), errors_(static_cast<std::size_t>(nranks)),
      busy_(std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(nranks))) {
  for (int r = 1; r < nranks; ++r) threads_.emplace_back([this, r] { loop(r); });
}

WorkerPool::~WorkerPool() {
  stop_.store(true, std::memory_order_release);
  generation_.wakeAll();
  for (auto& t : threads_) t.join();
}

void WorkerPool::runAll(const Watchdog& watchdog) {
  for (auto& e : errors_) e = nullptr;
  const auto workers = static_cast<std::uint32_t>(threads_.size());
  for (std::uint32_t r = 1; r <= workers; ++r) busy_[r].store(true, std::memory_order_relaxed);
  remaining_.value.store(workers, std::memory_order_relaxed);
  generation_.store(generation_.value.load(std::memory_order_relaxed) + 1);  // releases errors_, busy_, remaining_
  try {
    body_(0);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  waitForWorkers(watchdog);
  for (auto& e : errors_)
    if (e) std::rethrow_exception(e);
}

std::vector<int> WorkerPool::running() const {
  std::vector<int> ranks;
  for (std::size_t r = 1; r <= threads_.size(); ++r)
    if (busy_[r].load(std::memory_order_acquire)) ranks.push_back(static_cast<int>(r));
  return ranks;
}

void WorkerPool::waitForWorkers(const Watchdog& watchdog) {
  const std::atomic<bool> never{false};
  const auto done = [](std::uint32_t v) { return v == 0; };
  // Fast path: workers that finish within the spin need no progress sample (reading the executor's
  // progress pulls every connection's counters across cores: a cost on every tiny call).
  if (waitUntil(remaining_, done, never, Clock::now() + spin_, spin_) == WaitResult::Ready) return;
  if (watchdog.patience.count() > 0) {
    std::uint64_t seen = watchdog.progress ? watchdog.progress() : 0;
    std::uint32_t left = remaining_.value.load(std::memory_order_acquire);
    for (;;) {
      if (waitUntil(remaining_, done, never, Clock::now() + watchdog.patience, spin_) == WaitResult::Ready) return;
      const std::uint64_t now = watchdog.progress ? watchdog.progress() : 0;
      const std::uint32_t nowLeft = remaining_.value.load(std::memory_order_acquire);
      if (now != seen || nowLeft != left) {  // still moving: give it another period
        seen = now;
        left = nowLeft;
        continue;
      }
      if (watchdog.abort) watchdog.abort(running());
      break;
    }
  }
  // Without a watchdog, or after its abort (which ends every wait at once): the workers leave.
  while (waitUntil(remaining_, done, never, Clock::now() + kIdleRearm, spin_) != WaitResult::Ready) {
  }
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
    busy_[static_cast<std::size_t>(rank)].store(false, std::memory_order_release);
    const std::uint32_t left = remaining_.value.fetch_sub(1, std::memory_order_acq_rel) - 1;
    if (left == 0 && remaining_.sleepers.load(std::memory_order_seq_cst) != 0) remaining_.wakeAll();
  }
}

}  // namespace cclab::host
