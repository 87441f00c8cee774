// The flags every *_perf tool and peer shares (common_flags.h), and the sweep checks as UsageErrors.
#include "bench/report/common_flags.h"

#include <limits>

#include "bench/report/usage_error.h"
#include "bench/report/value_parse.h"
#include "collectives/core/errors.h"

namespace cclab::bench {
namespace {
constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
}

std::int64_t parseSizeFlag(std::string_view text, std::string_view flag) {
  try {
    return conventions::parseSize(text, flag);
  } catch (const InvalidArgument& e) {
    throw UsageError(e.what());
  }
}

void validate(const SweepOptions& sweep) {
  try {
    conventions::sweepCount(sweep);
  } catch (const InvalidArgument& e) {
    throw UsageError(e.what());
  }
}

std::vector<std::int64_t> sizesOf(const SweepOptions& sweep) {
  validate(sweep);
  return conventions::sweepSizes(sweep);
}

void addSweepFlags(CommandLine& cli, SweepOptions& s) {
  cli.addOption('b', "minbytes", "SIZE", "smallest size: bytes, or K/M/G/T (KiB..TiB; 1K = 1024) (default 32M)",
                [&s](std::string_view v) { s.minBytes = parseSizeFlag(v, "-b/--minbytes"); });
  cli.addOption('e', "maxbytes", "SIZE", "largest size (default 32M)",
                [&s](std::string_view v) { s.maxBytes = parseSizeFlag(v, "-e/--maxbytes"); });
  cli.addOption('f', "stepfactor", "N", "multiply the size by the whole number N each step (N > 1), else add -i",
                [&s](std::string_view v) {
                  try {
                    s.stepFactor = conventions::parseStepFactor(v, "-f/--stepfactor");
                  } catch (const InvalidArgument& e) {
                    throw UsageError(e.what());
                  }
                });
  cli.addOption('i', "stepbytes", "SIZE", "add SIZE each step when -f is 1 (default 1M)",
                [&s](std::string_view v) { s.stepBytes = parseSizeFlag(v, "-i/--stepbytes"); });
}

void addIterationFlags(CommandLine& cli, IterationOptions& it) {
  cli.addOption('n', "iters", "N", "timed iterations per size (default 20)",
                [&it](std::string_view v) { it.iters = static_cast<int>(parseInteger(v, 1, kMaxInt, "iterations")); });
  cli.addOption('w', "warmup_iters", "N", "warm-up iterations per size (default 5)",
                [&it](std::string_view v) { it.warmup = static_cast<int>(parseInteger(v, 0, kMaxInt, "warm-up iterations")); });
  cli.addOption('m', "agg_iters", "N", "collectives per timed iteration (default 1)", [&it](std::string_view v) {
    it.aggIters = static_cast<int>(parseInteger(v, 1, kMaxInt, "aggregated iterations"));
  });
  cli.addOption('c', "check", "0/1", "check results against the exact reference (default 1)",
                [&it](std::string_view v) { it.check = static_cast<int>(parseInteger(v, 0, kMaxInt, "check")); });
  cli.addOption('a', "average", "0/1/2/3", "per-rank time combined as 0=rank0 1=avg 2=min 3=max (default 1)",
                [&it](std::string_view v) { it.average = parseAverageMode(v); });
  cli.addOption('\0', "iter-bytes", "SIZE", "cap iterations so that iters*size <= SIZE (min 3; default off)",
                [&it](std::string_view v) { it.iterBytes = parseSizeFlag(v, "--iter-bytes"); });
}

void addRanksFlag(CommandLine& cli, int& nranks) {
  cli.addOption('g', "ngpus", "N", "ranks (GPUs or CPU threads) (default 1)",
                [&nranks](std::string_view v) { nranks = static_cast<int>(parseInteger(v, 1, kMaxRanks, "ranks")); });
}

void addJsonFlag(CommandLine& cli, std::string& path) {
  cli.addOption('J', "json", "FILE", "also write the results as JSON (schema: docs/bench.md), whole at the end",
                [&path](std::string_view v) {
                  if (v.empty()) throw UsageError("-J: an empty path (give a file name)");
                  path = std::string(v);
                });
}

}  // namespace cclab::bench
