// cclab-proc-pingpong: the round-trip time of two processes through one pair of shared words (the
// cross-process wait of shared_wait.h). Prints one line; exit 2 for bad flags, 1 for runtime failures.
//   cclab-proc-pingpong [--rounds N] [--spin-us U]
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <new>

#include "collectives/core/errors.h"
#include "collectives/proc/shared_wait.h"
#include "collectives/proc/shm_segment.h"

namespace {

using cclab::proc::Clock;
using cclab::proc::SharedWord;

struct Words {
  SharedWord ping, pong, abort;
};

// Rounds of ping -> pong between this process and a forked child; returns µs per round trip.
double pingPong(std::uint32_t rounds, std::chrono::nanoseconds spin) {
  using namespace cclab::proc;
  constexpr auto kTimeout = std::chrono::seconds(10);
  ShmSegment seg = ShmSegment::create(segmentName(makeJobId(), 0, "pingpong"), sizeof(Words));
  auto* w = new (seg.data()) Words{};
  const pid_t child = fork();
  if (child < 0) throw cclab::Error("fork failed");
  if (child == 0) {
    int rc = 0;
    try {
      for (std::uint32_t i = 1; i <= rounds; ++i) {
        waitAtLeast(w->ping, i, w->abort, kTimeout, spin, "the parent's ping");
        w->pong.store(i);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cclab-proc-pingpong: child: %s\n", e.what());
      rc = 1;
    }
    _exit(rc);
  }
  const auto start = Clock::now();
  try {
    for (std::uint32_t i = 1; i <= rounds; ++i) {
      w->ping.store(i);
      waitAtLeast(w->pong, i, w->abort, kTimeout, spin, "the child's pong");
    }
  } catch (...) {
    raiseAbort(w->abort, 1, {&w->ping});
    waitpid(child, nullptr, 0);
    throw;
  }
  const auto took = Clock::now() - start;
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw cclab::Error("the ping-pong child failed");
  return std::chrono::duration<double, std::micro>(took).count() / rounds;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Round trips between two processes through shared-memory words (cclab proc backend)"};
  std::uint32_t rounds = 100000;
  std::uint32_t spinUs = 50;
  app.add_option("--rounds", rounds, "round trips to time")->check(CLI::Range(1U, 10000000U));
  app.add_option("--spin-us", spinUs, "busy phase of each wait, microseconds")->check(CLI::Range(0U, 10000U));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    const double us = pingPong(rounds, std::chrono::microseconds(spinUs));
    std::printf("proc ping-pong: %u round trips, spin %u us: %.2f us per round trip\n", rounds, spinUs, us);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cclab-proc-pingpong: %s\n", e.what());
    return 1;
  }
}
