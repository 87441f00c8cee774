// Async training on the emulated device (--compute-model with --mode async): the workers' pulls and
// pushes happen in the order of the emulated clock, not of this CPU's scheduling, so staleness and the
// parameters each gradient sees are the modelled device's. Every worker declares the emulated time of
// its next event (a pull, which claims a batch, or a push); a worker may perform its event only while
// no other active worker has an earlier one (ties: the lower rank first). The worker holding the
// earliest time cannot be blocked by anyone, so the run always progresses (a conservative
// discrete-event simulation, with the real computation done between a pull and its push).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace cclab::trainer {

class VirtualGate {
 public:
  explicit VirtualGate(int workers, std::chrono::milliseconds timeout = std::chrono::minutes(5));

  // Every worker active again at emulated time `t` (the start of an epoch). Call while no worker runs.
  void startEpoch(double t);
  // Blocks until `rank`'s declared time is the earliest of the active workers'; throws TimeoutError
  // after the timeout, Error after abort(). Returns that time.
  double waitTurn(int rank);
  // Sets rank's next event time (must not go back in time).
  void declare(int rank, double t);
  // rank has no more events this epoch; its end is its declared time.
  void finish(int rank);
  // The latest declared time over the workers (the epoch's end once all finished).
  [[nodiscard]] double latest() const;
  // Wakes every waiter with an error (a worker failed).
  void abort();

 private:
  [[nodiscard]] bool isEarliest(int rank) const;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<double> next_;
  std::vector<bool> active_;
  std::chrono::milliseconds timeout_;
  bool aborted_ = false;
};

}  // namespace cclab::trainer
