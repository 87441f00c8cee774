// copy_bandwidth: the machine's memory-copy floor for the peer comparison. T threads each memcpy
// their own SIZE-byte buffer (larger than the caches) ITERS times, all at once; reported as bytes read
// plus bytes written per second over all threads, GB/s = 1e9 B/s.
//   copy_bandwidth [-t THREADS] [-s SIZE] [-n ITERS]     (defaults: 2 threads, 64M, 20)
// Prints one line: "copy_bandwidth threads=2 bytes=67108864 iters=20 gbps=51.23".
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "bench/report/common_flags.h"
#include "bench/report/usage_error.h"
#include "bench/report/value_parse.h"
#include "collectives/conventions/memory_budget.h"
#include "collectives/core/errors.h"

namespace {

struct CopyOptions {
  int threads = 2;
  std::int64_t bytes = std::int64_t{64} << 20;
  int iters = 20;
};

double copyGbps(const CopyOptions& o) {
  const auto n = static_cast<std::size_t>(o.bytes);
  std::vector<std::vector<char>> src(static_cast<std::size_t>(o.threads)), dst(static_cast<std::size_t>(o.threads));
  for (int t = 0; t < o.threads; ++t) {  // written once: no first-touch fault inside the timing
    src[static_cast<std::size_t>(t)].assign(n, static_cast<char>(t + 1));
    dst[static_cast<std::size_t>(t)].assign(n, 0);
  }
  auto work = [&](int t, int iters) {
    for (int i = 0; i < iters; ++i)
      std::memcpy(dst[static_cast<std::size_t>(t)].data(), src[static_cast<std::size_t>(t)].data(), n);
  };
  auto runAll = [&](int iters) {
    std::vector<std::thread> pool;
    for (int t = 0; t < o.threads; ++t) pool.emplace_back(work, t, iters);
    for (auto& th : pool) th.join();
  };
  runAll(1);  // warm-up
  const auto start = std::chrono::steady_clock::now();
  runAll(o.iters);
  const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
  constexpr double kReadPlusWrite = 2.0;  // each copied byte is read once and written once
  return kReadPlusWrite * static_cast<double>(n) * o.iters * o.threads / s.count() / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cclab::bench;
  CopyOptions o;
  bool help = false;
  CommandLine cli("copy_bandwidth");
  cli.addOption('t', "threads", "N", "threads copying at once (default 2)",
                [&](std::string_view v) { o.threads = static_cast<int>(parseInteger(v, 1, 1024, "threads")); });
  cli.addOption('s', "size", "SIZE", "bytes each thread copies (default 64M)", [&](std::string_view v) {
    o.bytes = parseSizeFlag(v, "-s/--size");
    if (o.bytes < 1) throw UsageError("size must be > 0");
  });
  cli.addOption('n', "iters", "N", "copies per thread (default 20)",
                [&](std::string_view v) { o.iters = static_cast<int>(parseInteger(v, 1, 1 << 20, "iterations")); });
  cli.addSwitch('h', "help", "print this help", [&] { help = true; });
  try {
    cli.parse(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "copy_bandwidth: %s\n", e.what());
    return kExitUsage;
  }
  if (help) {
    std::fputs(cli.usage().c_str(), stdout);
    return kExitOk;
  }
  try {  // each thread holds a source and a destination of -s bytes: refuse what cannot fit, before allocating
    namespace conv = cclab::conventions;
    if (const auto available = conv::hostMemoryAvailable())
      conv::requireMemory(conv::saturatingBytes(o.threads, conv::saturatingBytes(2, o.bytes)), *available,
                          "-s " + std::to_string(o.bytes) + " on -t " + std::to_string(o.threads),
                          "host memory (MemAvailable)");
  } catch (const cclab::InvalidArgument& e) {
    std::fprintf(stderr, "copy_bandwidth: %s\n", e.what());
    return kExitUsage;
  }
  std::printf("copy_bandwidth threads=%d bytes=%lld iters=%d gbps=%.2f\n", o.threads, static_cast<long long>(o.bytes),
              o.iters, copyGbps(o));
  return kExitOk;
}
