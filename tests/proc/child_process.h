// Test helpers for fork()-based tests: count a job's segments left in /dev/shm; run a function in a
// child process (its return value is the exit code, an exception is exit code 3), wait for it with a
// bound (a child past it is SIGKILLed),
// and a pipe the child uses to say it is ready. Children leave with _exit: no gtest or atexit code runs
// in them.
#pragma once

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>

namespace cclab::proc::testing {

// How many files of job `job` ("/dev/shm/cclab-<job>-*") exist: segments someone left behind.
inline int leftovers(const std::string& job) {
  int n = 0;
  const std::string prefix = "cclab-" + job + "-";
  if (DIR* d = opendir("/dev/shm")) {
    while (const dirent* e = readdir(d))
      if (std::string(e->d_name).rfind(prefix, 0) == 0) ++n;
    closedir(d);
  }
  return n;
}

template <class F>
pid_t forkChild(F body) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  int rc = 1;
  try {
    rc = body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", static_cast<int>(getpid()), e.what());
    rc = 3;
  }
  _exit(rc);
}

// The child's wait status, or -1 when it did not end within `timeout` (it is then killed and reaped).
inline int waitChild(pid_t pid, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

inline bool exitedWith(int status, int code) { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == code; }
inline bool killedBy(int status, int sig) { return status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == sig; }

// A one-shot "ready" signal from child to parent.
class ReadyPipe {
 public:
  ReadyPipe() {
    if (pipe(fds_) != 0) fds_[0] = fds_[1] = -1;
  }
  ~ReadyPipe() {
    for (int fd : fds_)
      if (fd >= 0) close(fd);
  }
  ReadyPipe(const ReadyPipe&) = delete;
  ReadyPipe& operator=(const ReadyPipe&) = delete;
  void signal() const {
    const char c = 'r';
    (void)!write(fds_[1], &c, 1);
  }
  // True when the child signalled within `timeout`.
  [[nodiscard]] bool wait(std::chrono::milliseconds timeout = std::chrono::seconds(20)) const {
    pollfd p{fds_[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
    char c = 0;
    return read(fds_[0], &c, 1) == 1;
  }

 private:
  int fds_[2] = {-1, -1};
};

}  // namespace cclab::proc::testing
