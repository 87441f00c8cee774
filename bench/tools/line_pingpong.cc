// line_pingpong: the floor of a small-message collective on this machine, i.e. what handing one cache
// line from one thread to another costs. T threads pass a token round-robin through one 64-byte line:
// thread t waits until the line holds a value v with v % T == t, then stores v + 1. With T = 2 and
// spinning waits each hand-off is one cache-line transfer between cores (plus a load and a store); with
// more threads than cores and yielding waits it is a context switch (what a rank pays when ranks
// outnumber cores, e.g. 4 ranks on 2 cores).
//   line_pingpong [-t THREADS] [-n HANDOFFS] [-w spin|yield] [--bind]   (defaults: 2, 1000000, spin)
// --bind pins thread t to CPU t mod cores (as mpirun binds its processes).
// Prints one line: "line_pingpong threads=2 wait=spin handoffs=1000000 ns_per_handoff=75.3".
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

#include "bench/report/cli.h"
#include "bench/report/usage_error.h"
#include "bench/report/value_parse.h"
#include "collectives/core/futex.h"

namespace {

struct PingOptions {
  int threads = 2;
  std::int64_t handoffs = 1000000;
  bool yield = false;
  bool bind = false;
};

struct alignas(64) Line {
  std::atomic<std::uint64_t> value{0};
};

double nsPerHandoff(const PingOptions& o) {
  Line line;
  const auto t = static_cast<std::uint64_t>(o.threads);
  const auto total = static_cast<std::uint64_t>(o.handoffs);
  auto body = [&](std::uint64_t me) {
    if (o.bind) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(static_cast<unsigned>(me) % std::max(1U, std::thread::hardware_concurrency()), &set);
      pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    for (std::uint64_t v = me; v < total; v += t) {
      while (line.value.load(std::memory_order_acquire) != v) {
        if (o.yield)
          std::this_thread::yield();
        else
          cclab::cpuRelax();
      }
      line.value.store(v + 1, std::memory_order_release);
    }
  };
  std::vector<std::thread> pool;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 1; i < t; ++i) pool.emplace_back(body, i);
  body(0);
  for (auto& th : pool) th.join();
  const std::chrono::duration<double, std::nano> ns = std::chrono::steady_clock::now() - start;
  return ns.count() / static_cast<double>(total);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cclab::bench;
  PingOptions o;
  bool help = false;
  CommandLine cli("line_pingpong");
  cli.addOption('t', "threads", "N", "threads passing the token (default 2)",
                [&](std::string_view v) { o.threads = static_cast<int>(parseInteger(v, 2, 64, "threads")); });
  cli.addOption('n', "handoffs", "N", "hand-offs in all (default 1000000)",
                [&](std::string_view v) { o.handoffs = parseInteger(v, 1, std::int64_t{1} << 32, "handoffs"); });
  cli.addOption('w', "wait", "spin|yield", "how a thread waits for its turn (default spin)", [&](std::string_view v) {
    if (v != "spin" && v != "yield") throw UsageError("--wait must be spin or yield, got '" + std::string(v) + "'");
    o.yield = v == "yield";
  });
  cli.addSwitch('\0', "bind", "pin thread t to CPU t mod cores", [&] { o.bind = true; });
  cli.addSwitch('h', "help", "print this help", [&] { help = true; });
  try {
    cli.parse(argc, argv);
    // Spinning threads beyond the cores only wait for the scheduler's time slice: refuse it.
    if (!o.yield && static_cast<unsigned>(o.threads) > std::thread::hardware_concurrency())
      throw UsageError("--wait spin needs at most one thread per core (" +
                       std::to_string(std::thread::hardware_concurrency()) + "): use --wait yield");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "line_pingpong: %s\n", e.what());
    return kExitUsage;
  }
  if (help) {
    std::fputs(cli.usage().c_str(), stdout);
    return kExitOk;
  }
  std::printf("line_pingpong threads=%d wait=%s handoffs=%lld ns_per_handoff=%.1f\n", o.threads,
              o.yield ? "yield" : "spin", static_cast<long long>(o.handoffs), nsPerHandoff(o));
  return kExitOk;
}
