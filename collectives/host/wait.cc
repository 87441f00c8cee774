#include "collectives/host/wait.h"

#include <sched.h>

#include <optional>

#include "collectives/core/knobs.h"

namespace cclab::host {

void sleepWhileEqual(WaitWord& word, std::uint32_t seen, std::chrono::nanoseconds timeout) {
  futexWait(word.value, seen, timeout, FutexScope::Private);
}

static_assert(knobs::knob(knobs::Id::SpinUs).max == kMaxSpin.count(), "CCLAB_SPIN_US's range is kMaxSpin");

int usableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set);
}

std::chrono::nanoseconds spinFromEnvironment(std::chrono::nanoseconds fallback) {
  const std::optional<std::int64_t> us = knobs::integer(knobs::Id::SpinUs);
  if (us) return std::chrono::nanoseconds(std::chrono::microseconds(*us));
  // A process allowed one CPU (taskset -c 0, a one-CPU cgroup): the peer it waits for runs on that
  // same CPU, so spinning only holds it off until the scheduler's quantum ends; yield at once instead.
  if (usableCpus() == 1) return std::chrono::nanoseconds(0);
  return fallback;
}

}  // namespace cclab::host
