#include "collectives/host/wait.h"

#include <optional>

#include "collectives/core/knobs.h"

namespace cclab::host {

void sleepWhileEqual(WaitWord& word, std::uint32_t seen, std::chrono::nanoseconds timeout) {
  futexWait(word.value, seen, timeout, FutexScope::Private);
}

static_assert(knobs::knob(knobs::Id::SpinUs).max == kMaxSpin.count(), "CCLAB_SPIN_US's range is kMaxSpin");

std::chrono::nanoseconds spinFromEnvironment(std::chrono::nanoseconds fallback) {
  const std::optional<std::int64_t> us = knobs::integer(knobs::Id::SpinUs);
  return us ? std::chrono::nanoseconds(std::chrono::microseconds(*us)) : fallback;
}

}  // namespace cclab::host
