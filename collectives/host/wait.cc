#include "collectives/host/wait.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <charconv>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>

#include "collectives/core/errors.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cclab::host {

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

void WaitWord::store(std::uint32_t v) {
  value.store(v, std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) != 0) wakeAll();
}

void WaitWord::wakeAll() {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&value), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

void sleepWhileEqual(WaitWord& word, std::uint32_t seen, std::chrono::nanoseconds timeout) {
  if (timeout.count() <= 0) return;
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000000000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1000000000);
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word.value), FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
}

std::chrono::nanoseconds spinFromEnvironment(std::chrono::nanoseconds fallback) {
  const char* env = std::getenv("CCLAB_SPIN_US");
  if (env == nullptr) return fallback;
  const std::string_view text(env);
  long long us = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), us);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || us < 0 || us > kMaxSpin.count())
    throw InvalidArgument("CCLAB_SPIN_US='" + std::string(text) + "': expected whole microseconds in [0, " +
                          std::to_string(kMaxSpin.count()) + "]");
  return std::chrono::microseconds(us);
}

}  // namespace cclab::host
