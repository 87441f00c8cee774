// Stale synchronous parallel (Ho et al., 2013): worker clocks count pushes; no worker is ever more
// than `bound` pushes ahead of the slowest active worker. So a worker may start a step (which ends in
// a push) only while it is fewer than `bound` pushes ahead, or is itself the slowest: bound 0 runs in
// lock-step rounds (the gap is then 1 between a worker's push and the last push of its round).
// bound < 0: no limit. A worker that has run out of work for the epoch finishes (stops counting as the slowest);
// reset() starts the next epoch with every clock at 0.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace cclab::trainer {

class SspClock {
 public:
  SspClock(int workers, int bound);
  // Blocks until `worker` may start its next step; returns the ns it waited. Throws Error after abort().
  std::int64_t waitTurn(int worker);
  void advance(int worker);
  void finish(int worker);
  void reset();  // only while no worker waits
  // The largest gap (a worker's clock - the slowest active worker's) seen after any push; <= max(bound, 1).
  [[nodiscard]] std::int64_t maxGap();
  // Releases every waiter (a worker failed).
  void abort();

 private:
  [[nodiscard]] std::int64_t slowest() const;

  int bound_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::int64_t> clocks_;
  std::vector<bool> finished_;
  bool aborted_ = false;
  std::int64_t maxGap_ = 0;
};

}  // namespace cclab::trainer
