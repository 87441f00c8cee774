// A signal-safe registry of shared-memory segment names this process created, so that they are unlinked
// on every exit path a process can catch: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT (an uncaught
// exception ends in abort) and std::exit. The handler unlinks the files of the registered names (only
// those registered by the current pid: a forked child inherits the table but not the ownership), then
// restores the previous disposition and re-raises the signal, so the process still ends by it.
// SIGKILL cannot be caught: stale_sweep.h removes what a killed creator left.
#pragma once

#include <string_view>

namespace cclab::proc {

// Installs the handlers and the atexit hook once per process (later calls do nothing). Signals whose
// disposition is SIG_IGN stay ignored.
void installCleanupHandlers();

// Records `path` (the file under /dev/shm, at most kMaxCleanupPath - 1 characters) as owned by the
// calling process. Throws cclab::Error when the table (kCleanupSlots names) is full or the path is long.
inline constexpr int kCleanupSlots = 256;
inline constexpr int kMaxCleanupPath = 128;
void registerForCleanup(std::string_view path);

// Forgets `path` (after its owner unlinked it). Unknown paths are ignored.
void unregisterForCleanup(std::string_view path);

// How many paths the calling process has registered (tests).
int registeredForCleanup();

// Unlinks every path the calling process registered and forgets them. Async-signal-safe.
void unlinkRegisteredNow() noexcept;

}  // namespace cclab::proc
