// Stale synchronous parallel (Ho et al., 2013): worker clocks count pushes; a worker may start a
// step only while it is at most `bound` pushes ahead of the slowest active worker. bound < 0: no
// limit. A worker that has run out of work for the epoch finishes (stops counting as the slowest);
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
};

}  // namespace cclab::trainer
