#include "trainer/run/epoch_runner.h"

#include <atomic>
#include <barrier>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "collectives/core/errors.h"

namespace cclab::trainer {

std::int64_t runEpochs(int workers, int epochs, const RunClock& clock, const EpochRunnerHooks& hooks) {
  std::int64_t trainNs = 0;
  std::int64_t epochStart = clock.nowNs();
  int epoch = 0;
  std::mutex errorMutex;
  std::exception_ptr firstError;
  std::atomic<bool> failed{false};
  auto record = [&](std::exception_ptr e) {
    std::lock_guard lock(errorMutex);
    // A timeout is usually the consequence of another worker's failure: keep the cause.
    bool replace = !firstError;
    if (!replace) {
      try {
        std::rethrow_exception(firstError);
      } catch (const TimeoutError&) {
        replace = true;
      } catch (...) {
      }
    }
    if (replace) firstError = e;
    failed = true;
  };
  auto completion = [&]() noexcept {
    const std::int64_t end = clock.nowNs();
    trainNs += end - epochStart;
    if (!failed) {
      try {
        hooks.onEpochEnd(epoch, end - epochStart);
      } catch (...) {
        record(std::current_exception());
      }
    }
    ++epoch;
    epochStart = clock.nowNs();
  };
  std::barrier sync(workers, completion);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(workers));
  for (int r = 0; r < workers; ++r)
    threads.emplace_back([&, r] {
      try {
        for (int e = 0; e < epochs; ++e) {
          if (failed) {  // another worker failed: leave quietly
            sync.arrive_and_drop();
            return;
          }
          hooks.runEpoch(r, e);
          sync.arrive_and_wait();
        }
      } catch (...) {
        record(std::current_exception());
        if (hooks.onFailure) hooks.onFailure();
        sync.arrive_and_drop();
      }
    });
  for (auto& t : threads) t.join();
  if (firstError) std::rethrow_exception(firstError);
  return trainNs;
}

}  // namespace cclab::trainer
