// The cleanup registry: a fixed table of slots (no allocation, so the signal handler may read it).
#include "collectives/proc/cleanup_registry.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::proc {
namespace {

enum SlotState : int { kFree = 0, kWriting = 1, kActive = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  pid_t pid = 0;
  char path[kMaxCleanupPath] = {};
};

std::array<Slot, kCleanupSlots> gSlots;

constexpr std::array<int, 5> kSignals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT};
std::array<struct sigaction, 5> gPrevious{};
std::array<bool, 5> gInstalled{};

void onSignal(int sig) {
  const int savedErrno = errno;
  unlinkRegisteredNow();
  for (std::size_t i = 0; i < kSignals.size(); ++i)
    if (kSignals[i] == sig && gInstalled[i]) sigaction(sig, &gPrevious[i], nullptr);
  errno = savedErrno;
  raise(sig);  // delivered when the handler returns (the signal is blocked inside it)
}

void atExit() { unlinkRegisteredNow(); }

bool samePath(const Slot& s, std::string_view path) {
  return std::strlen(s.path) == path.size() && std::memcmp(s.path, path.data(), path.size()) == 0;
}

}  // namespace

void installCleanupHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      struct sigaction current {};
      if (sigaction(kSignals[i], nullptr, &current) != 0) continue;
      if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) continue;
      struct sigaction mine {};
      mine.sa_handler = onSignal;
      sigemptyset(&mine.sa_mask);
      mine.sa_flags = SA_RESTART;
      if (sigaction(kSignals[i], &mine, &gPrevious[i]) == 0) gInstalled[i] = true;
    }
    std::atexit(atExit);
  });
}

void registerForCleanup(std::string_view path) {
  if (path.empty() || path.size() >= static_cast<std::size_t>(kMaxCleanupPath))
    throw Error("proc: segment path '" + std::string(path) + "' is empty or longer than " +
                std::to_string(kMaxCleanupPath - 1) + " characters");
  for (Slot& s : gSlots) {
    int expected = kFree;
    if (!s.state.compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel)) continue;
    s.pid = getpid();
    std::memcpy(s.path, path.data(), path.size());
    s.path[path.size()] = '\0';
    s.state.store(kActive, std::memory_order_release);
    return;
  }
  throw Error("proc: more than " + std::to_string(kCleanupSlots) + " live shared segments in one process");
}

void unregisterForCleanup(std::string_view path) {
  const pid_t me = getpid();
  for (Slot& s : gSlots) {
    if (s.state.load(std::memory_order_acquire) != kActive || s.pid != me || !samePath(s, path)) continue;
    int expected = kActive;
    if (s.state.compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel)) {
      s.path[0] = '\0';
      s.state.store(kFree, std::memory_order_release);
    }
    return;
  }
}

int registeredForCleanup() {
  const pid_t me = getpid();
  int n = 0;
  for (const Slot& s : gSlots)
    if (s.state.load(std::memory_order_acquire) == kActive && s.pid == me) ++n;
  return n;
}

void unlinkRegisteredNow() noexcept {
  const pid_t me = getpid();
  for (Slot& s : gSlots) {
    if (s.state.load(std::memory_order_acquire) != kActive || s.pid != me) continue;
    int expected = kActive;
    if (!s.state.compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel)) continue;
    unlink(s.path);
    s.path[0] = '\0';
    s.state.store(kFree, std::memory_order_release);
  }
}

}  // namespace cclab::proc
