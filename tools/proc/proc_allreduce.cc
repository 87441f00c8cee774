// cclab-proc-allreduce: times a float sum allreduce across forked processes through ShmExecutor (the
// within-a-node path of the process backend) and checks the last result against the exact reference.
// One line per run: size, time per call, algbw and busbw (nccl-tests' definitions), #wrong.
//   cclab-proc-allreduce [--ranks P] [--bytes N] [--iters K] [--algo ring] [--slice-bytes S] [--spin-us U]
// Exit 2 for bad flags, 1 for runtime failures (a rank that fails or times out, a wrong result).
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <new>
#include <thread>
#include <string>
#include <vector>

#include "collectives/conventions/bandwidth.h"
#include "collectives/core/errors.h"
#include "collectives/core/test_data.h"
#include "collectives/proc/shm_executor.h"
#include "collectives/proc/stale_sweep.h"

namespace {

using namespace cclab;
using cclab::proc::Clock;

struct Settings {
  int ranks = 2;
  std::int64_t bytes = 64 << 20;
  int iters = 20;
  std::string algo = "ring";
  std::int64_t sliceBytes = 512 << 10;
  int spinUs = -1;  // -1: 50 when every rank has a core, else 0
};

// Rank `rank`: a warm-up call, then `iters` timed calls; writes rank 0's seconds per call and the
// last call's wrong count to `result` (a pair of doubles in a shared segment).
int runRank(const std::string& job, int rank, const Settings& s, double* result) {
  const std::int64_t count = s.bytes / 4;
  const plan::Plan p = plan::makePlan(plan::Collective::AllReduce, plan::parseAlgorithm(s.algo), s.ranks, count);
  const auto bytes = static_cast<std::size_t>(count) * 4;
  const std::size_t scratchAt = 2 * bytes + 64;
  proc::ShmExecutor ex(job, rank, s.ranks, scratchAt + static_cast<std::size_t>(p.scratchCount) * 4,
                       std::chrono::seconds(30));
  const proc::ShmLayout layout{0, bytes + 64, scratchAt};
  const DataSpec spec{DataType::Float32, ReduceOp::Sum, s.ranks, 5};
  fillInput(spec, rank, 0, static_cast<std::size_t>(count), ex.buffer());
  proc::ShmRunOptions o;
  o.reduce = hostReduceFn(DataType::Float32, ReduceOp::Sum);
  o.sliceElems = s.sliceBytes / 4;
  o.timeout = std::chrono::seconds(30);
  const bool coresSuffice = static_cast<unsigned>(s.ranks) <= std::thread::hardware_concurrency();
  o.spin = std::chrono::microseconds(s.spinUs >= 0 ? s.spinUs : (coresSuffice ? 50 : 0));
  ex.run(p, layout, o);  // warm-up: pages touched, peers in step
  const auto start = Clock::now();
  for (int i = 0; i < s.iters; ++i) ex.run(p, layout, o);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count() / s.iters;
  std::vector<float> expected(static_cast<std::size_t>(count));
  fillExpectedReduce(spec, 0, expected.size(), expected.data());
  const std::size_t wrong = countWrong(DataType::Float32, ex.buffer() + layout.output, expected.data(), expected.size());
  if (rank == 0) result[0] = seconds;
  if (wrong != 0) result[1] += static_cast<double>(wrong);  // any rank's error shows
  return wrong == 0 ? 0 : 4;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Float sum allreduce across forked processes through shared memory (cclab proc backend)"};
  Settings s;
  app.add_option("--ranks", s.ranks, "processes")->check(CLI::Range(1, 64));
  app.add_option("--bytes", s.bytes, "bytes per rank (a multiple of 4)")->check(CLI::Range(std::int64_t{4}, std::int64_t{1} << 30));
  app.add_option("--iters", s.iters, "timed calls")->check(CLI::Range(1, 100000));
  app.add_option("--algo", s.algo, "ring, tree, dbtree, rhd, rd");
  app.add_option("--spin-us", s.spinUs, "busy phase of each wait (default: 50 when ranks <= cores, else 0)")
      ->check(CLI::Range(0, 10000));
  app.add_option("--slice-bytes", s.sliceBytes, "bytes per slice (0: whole ops)")->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 30));
  try {
    app.parse(argc, argv);
    if (s.bytes % 4 != 0) throw CLI::ValidationError("--bytes", "not a multiple of 4");
    (void)plan::makePlan(plan::Collective::AllReduce, plan::parseAlgorithm(s.algo), s.ranks, 1);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "cclab-proc-allreduce: --algo: %s\n", e.what());
    return 2;
  }
  try {
    const std::string job = proc::makeJobId();
    proc::ShmSegment out = proc::ShmSegment::create(proc::segmentName(job, 0, "result"), 2 * sizeof(double));
    auto* result = new (out.data()) double[2]{0, 0};
    std::vector<pid_t> kids;
    for (int r = 0; r < s.ranks; ++r) {
      const pid_t pid = fork();
      if (pid < 0) throw Error("fork failed");
      if (pid == 0) {
        int rc = 1;
        try {
          rc = runRank(job, r, s, result);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "cclab-proc-allreduce: rank %d: %s\n", r, e.what());
        }
        _exit(rc);
      }
      kids.push_back(pid);
    }
    bool ok = true;
    for (pid_t k : kids) {
      int status = 0;
      waitpid(k, &status, 0);
      ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    proc::cleanupStaleSegments(job);
    if (!ok) throw Error("a rank failed (see above)");
    const auto bw = conventions::bandwidthOf(plan::Collective::AllReduce, s.ranks, s.bytes, result[0]);
    std::printf("proc allreduce %s: %d ranks, %lld bytes, slice %lld: %.1f us, algbw %.2f GB/s, busbw %.2f GB/s, #wrong %.0f\n",
                s.algo.c_str(), s.ranks, static_cast<long long>(s.bytes), static_cast<long long>(s.sliceBytes),
                result[0] * 1e6, bw.algBw, bw.busBw, result[1]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cclab-proc-allreduce: %s\n", e.what());
    return 1;
  }
}
