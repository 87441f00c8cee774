// group_latency: the time of one small host allreduce, robust to a loaded machine. It runs B batches of
// N back-to-back calls and reports the fastest batch's mean, the 10th percentile and the median of the
// batch means (µs per call): a batch that lost a core to another process is slow, the fastest batches
// show what a call costs when it keeps its cores. all_reduce_perf reports the mean of all calls,
// which on a shared machine with few cores moves 2-5x with the load (docs/results/cpu-peers.md).
//   group_latency [-g | -t] [-p RANKS] [-a ALGO] [-c COUNT] [-b BATCHES] [-n CALLS]
// -g (default): group calls (runGroup: one thread drives every rank through the worker pool);
// -t: a thread per rank, each calling run() for its rank (nccl-tests' -t). Float32 sum, COUNT
// elements (default 2: 8 bytes); the last call's result is checked against the exact reference.
// Prints one line: "group_latency mode=group ranks=2 algo=rd bytes=8 batches=200 calls=1000
// min_us=0.251 p10_us=0.262 median_us=0.281 wrong=0".
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/report/cli.h"
#include "bench/report/usage_error.h"
#include "bench/report/value_parse.h"
#include "collectives/communicator.h"
#include "collectives/core/errors.h"
#include "collectives/core/knobs.h"
#include "collectives/core/test_data.h"

namespace {

using Seconds = std::chrono::duration<double>;

struct LatencyOptions {
  bool threads = false;
  int ranks = 2;
  cclab::plan::Algorithm algo = cclab::plan::Algorithm::RecursiveDoubling;
  std::int64_t count = 2;
  int batches = 200;
  int calls = 1000;
};

// Batch means in µs; `wrong` gets the wrong outputs of the last call over all ranks.
std::vector<double> measure(const LatencyOptions& o, std::size_t& wrong) {
  using namespace cclab;
  auto comm = makeCommunicator(Backend::Host, {o.ranks});
  const auto n = static_cast<std::size_t>(o.count);
  const DataSpec spec{DataType::Float32, ReduceOp::Sum, o.ranks, 1};
  std::vector<std::vector<float>> in(static_cast<std::size_t>(o.ranks), std::vector<float>(n)),
      out(static_cast<std::size_t>(o.ranks), std::vector<float>(n));
  std::vector<RankBuffers> bufs;
  for (int r = 0; r < o.ranks; ++r) {
    fillInput(spec, r, 0, n, in[static_cast<std::size_t>(r)].data());
    bufs.push_back({in[static_cast<std::size_t>(r)].data(), out[static_cast<std::size_t>(r)].data()});
  }
  const CollectiveArgs args{plan::Collective::AllReduce, o.count, DataType::Float32, ReduceOp::Sum, 0};
  CollectiveOptions opts;
  opts.algorithm = o.algo;
  std::vector<double> means;
  const int warmBatches = 5;
  if (!o.threads) {
    for (int b = 0; b < warmBatches + o.batches; ++b) {
      const auto start = std::chrono::steady_clock::now();
      for (int c = 0; c < o.calls; ++c) comm->runGroup(args, bufs, opts);
      const Seconds s = std::chrono::steady_clock::now() - start;
      if (b >= warmBatches) means.push_back(s.count() * 1e6 / o.calls);
    }
  } else {
    std::barrier sync(o.ranks);
    const auto body = [&](int r) {
      for (int b = 0; b < warmBatches + o.batches; ++b) {
        sync.arrive_and_wait();  // every rank starts the batch together
        const auto start = std::chrono::steady_clock::now();
        for (int c = 0; c < o.calls; ++c) comm->run(r, args, bufs[static_cast<std::size_t>(r)], opts);
        const Seconds s = std::chrono::steady_clock::now() - start;
        if (r == 0 && b >= warmBatches) means.push_back(s.count() * 1e6 / o.calls);
      }
    };
    std::vector<std::jthread> pool;
    for (int r = 1; r < o.ranks; ++r) pool.emplace_back(body, r);
    body(0);
  }
  std::vector<float> want(n);
  fillExpectedReduce(spec, 0, n, want.data());
  wrong = 0;
  for (const auto& v : out) wrong += countWrong(DataType::Float32, v.data(), want.data(), n);
  return means;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cclab::bench;
  LatencyOptions o;
  bool help = false;
  CommandLine cli("group_latency");
  cli.addSwitch('g', "group", "group calls: one thread drives every rank (default)", [&] { o.threads = false; });
  cli.addSwitch('t', "threads", "a thread per rank calling run()", [&] { o.threads = true; });
  cli.addOption('p', "ranks", "N", "ranks (default 2)",
                [&](std::string_view v) { o.ranks = static_cast<int>(parseInteger(v, 1, 64, "ranks")); });
  cli.addOption('a', "algo", "NAME", "algorithm (default rd)", [&](std::string_view v) {
    try {
      o.algo = cclab::plan::parseAlgorithm(v);
    } catch (const cclab::InvalidArgument& e) {
      throw UsageError(e.what());
    }
  });
  cli.addOption('c', "count", "N", "float elements per call (default 2)",
                [&](std::string_view v) { o.count = parseInteger(v, 1, std::int64_t{1} << 20, "count"); });
  cli.addOption('b', "batches", "N", "timed batches (default 200)",
                [&](std::string_view v) { o.batches = static_cast<int>(parseInteger(v, 1, 1000000, "batches")); });
  cli.addOption('n', "calls", "N", "calls per batch (default 1000)",
                [&](std::string_view v) { o.calls = static_cast<int>(parseInteger(v, 1, 100000000, "calls")); });
  cli.addSwitch('h', "help", "print this help", [&] { help = true; });
  try {
    cli.parse(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "group_latency: %s\n", e.what());
    return kExitUsage;
  }
  if (help) {
    std::fputs(cli.usage().c_str(), stdout);
    return kExitOk;
  }
  try {
    cclab::knobs::checkAll();
  } catch (const cclab::InvalidArgument& e) {
    std::fprintf(stderr, "group_latency: %s\n", e.what());
    return kExitUsage;
  }
  try {
    std::size_t wrong = 0;
    std::vector<double> means = measure(o, wrong);
    std::sort(means.begin(), means.end());
    const auto at = [&](double q) { return means[static_cast<std::size_t>(q * static_cast<double>(means.size() - 1))]; };
    std::printf("group_latency mode=%s ranks=%d algo=%s bytes=%lld batches=%d calls=%d min_us=%.3f p10_us=%.3f "
                "median_us=%.3f wrong=%zu\n",
                o.threads ? "threads" : "group", o.ranks, std::string(cclab::plan::name(o.algo)).c_str(),
                static_cast<long long>(o.count * 4), o.batches, o.calls, means.front(), at(0.1), at(0.5), wrong);
    return wrong == 0 ? kExitOk : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "group_latency: %s\n", e.what());
    return 1;
  }
}
