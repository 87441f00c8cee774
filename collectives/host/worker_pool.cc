// WorkerPool: the persistent workers of group calls and runAll's bounded wait for them.
#include "collectives/host/worker_pool.h"

namespace cclab::host {
namespace {
// Workers idle between jobs; there is nothing to time out on, so they re-arm their wait this often.
constexpr std::chrono::hours kIdleRearm{1};
// Checks of a word before a wait reads the clock: a back-to-back call's hand-off (one cache-line
// transfer, ~45 ns quiet) usually lands within them, and a clock read costs about as much (~30 ns).
constexpr int kChecksBeforeClock = 256;

// Only where waits spin at all (spin > 0: a core per rank).
template <class Ready>
bool readyWithinChecks(const WaitWord& word, Ready ready, std::chrono::nanoseconds spin) {
  for (int i = 0; spin.count() > 0 && i < kChecksBeforeClock; ++i) {
    if (ready(word.value.load(std::memory_order_acquire))) return true;
    cpuRelax();
  }
  return false;
}
}  // namespace

WorkerPool::WorkerPool(int nranks, std::function<void(int)> body, std::chrono::nanoseconds spin)
    : body_(std::move(body)), spin_(spin), errors_(static_cast<std::size_t>(nranks)),
      done_(std::make_unique<WaitWord[]>(static_cast<std::size_t>(std::max(nranks, 1)))) {
  for (int r = 1; r < nranks; ++r) threads_.emplace_back([this, r] { loop(r); });
}

WorkerPool::~WorkerPool() {
  stop_.store(true, std::memory_order_release);
  generation_.wakeAll();
  for (auto& t : threads_) t.join();
}

void WorkerPool::runAll(const Watchdog& watchdog, bool rank0Completes) {
  // errors_ needs no reset: a worker writes its entry only when it throws, and runAll clears what it
  // rethrows (below), so the entries are null between jobs.
  const std::uint32_t generation = generation_.value.load(std::memory_order_relaxed) + 1;
  generation_.store(generation);  // releases the job (the caller's writes before runAll)
  try {
    body_(0);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  if (rank0Completes && !errors_[0]) return;
  waitForWorkers(watchdog, generation);
  std::exception_ptr first;
  for (auto& e : errors_)
    if (e) {
      if (!first) first = e;
      e = nullptr;
    }
  if (first) std::rethrow_exception(first);
}

std::vector<int> WorkerPool::running(std::uint32_t generation) const {
  std::vector<int> ranks;
  for (std::size_t r = 1; r <= threads_.size(); ++r)
    if (done_[r].value.load(std::memory_order_acquire) != generation) ranks.push_back(static_cast<int>(r));
  return ranks;
}

void WorkerPool::waitForWorkers(const Watchdog& watchdog, std::uint32_t generation) {
  const std::atomic<bool> never{false};
  const auto done = [generation](std::uint32_t v) { return v == generation; };
  for (std::size_t r = 1; r <= threads_.size(); ++r) {
    WaitWord& word = done_[r];
    if (readyWithinChecks(word, done, spin_)) continue;
    // Workers that finish within the spin need no progress sample (reading the executor's progress
    // pulls every connection's counters across cores: a cost on every tiny call).
    if (waitUntil(word, done, never, Clock::now() + spin_, spin_) == WaitResult::Ready) continue;
    if (watchdog.patience.count() > 0) {
      std::uint64_t seen = watchdog.progress ? watchdog.progress() : 0;
      bool ended = false;
      for (;;) {
        if (waitUntil(word, done, never, Clock::now() + watchdog.patience, spin_) == WaitResult::Ready) {
          ended = true;
          break;
        }
        const std::uint64_t now = watchdog.progress ? watchdog.progress() : 0;
        if (now != seen) {  // still moving: give it another period
          seen = now;
          continue;
        }
        if (watchdog.abort) watchdog.abort(running(generation));
        break;
      }
      if (ended) continue;
    }
    // Without a watchdog, or after its abort (which ends every wait at once): the workers leave.
    for (std::size_t q = r; q <= threads_.size(); ++q)
      while (waitUntil(done_[q], done, never, Clock::now() + kIdleRearm, spin_) != WaitResult::Ready) {
      }
    return;
  }
}

void WorkerPool::loop(int rank) {
  std::uint32_t seen = 0;
  WaitWord& mine = done_[static_cast<std::size_t>(rank)];
  const auto next = [&seen](std::uint32_t v) { return v != seen; };
  for (;;) {
    if (!readyWithinChecks(generation_, next, spin_)) {
      const auto r = waitUntil(generation_, next, stop_, Clock::now() + kIdleRearm, spin_);
      if (r == WaitResult::Aborted) return;
      if (r == WaitResult::TimedOut) continue;
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.value.load(std::memory_order_acquire);
    try {
      body_(rank);
    } catch (...) {
      errors_[static_cast<std::size_t>(rank)] = std::current_exception();
    }
    mine.store(seen);  // releases this rank's results and error; wakes the caller if it sleeps
  }
}

}  // namespace cclab::host
