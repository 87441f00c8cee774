#include "collectives/core/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace cclab {
namespace {

static_assert(std::atomic<std::uint32_t>::is_always_lock_free && sizeof(std::atomic<std::uint32_t>) == 4,
              "a futex word is a plain 32-bit word");

std::uint32_t* address(const std::atomic<std::uint32_t>& word) {
  return const_cast<std::uint32_t*>(reinterpret_cast<const std::uint32_t*>(&word));
}

}  // namespace

void futexWait(const std::atomic<std::uint32_t>& word, std::uint32_t seen, std::chrono::nanoseconds timeout,
               FutexScope scope) {
  if (timeout.count() <= 0) return;
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000000000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1000000000);
  syscall(SYS_futex, address(word), scope == FutexScope::Private ? FUTEX_WAIT_PRIVATE : FUTEX_WAIT, seen, &ts,
          nullptr, 0);
}

void futexWakeAll(const std::atomic<std::uint32_t>& word, FutexScope scope) {
  syscall(SYS_futex, address(word), scope == FutexScope::Private ? FUTEX_WAKE_PRIVATE : FUTEX_WAKE, INT_MAX, nullptr,
          nullptr, 0);
}

}  // namespace cclab
