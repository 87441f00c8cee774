// Runs N worker threads through E epochs with a barrier after each epoch. At each barrier one
// thread calls onEpochEnd(epoch, epochTrainNs) (evaluation, progress) while the others wait; that
// time is not training time. A worker that throws leaves the barrier and calls onFailure (which
// must release anything the others may block on); the first failure is rethrown by run().
#pragma once

#include <cstdint>
#include <functional>

#include "trainer/run/clock.h"

namespace cclab::trainer {

struct EpochRunnerHooks {
  std::function<void(int rank, int epoch)> runEpoch;
  std::function<void(int epoch, std::int64_t epochTrainNs)> onEpochEnd;
  std::function<void()> onFailure;
};

// Returns the total training time in ns (evaluation excluded).
std::int64_t runEpochs(int workers, int epochs, const RunClock& clock, const EpochRunnerHooks& hooks);

}  // namespace cclab::trainer
