#include "collectives/host/wait.h"

#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>

#include "collectives/core/errors.h"

namespace cclab::host {

void sleepWhileEqual(WaitWord& word, std::uint32_t seen, std::chrono::nanoseconds timeout) {
  futexWait(word.value, seen, timeout, FutexScope::Private);
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
