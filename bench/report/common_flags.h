// The flags every *_perf tool and peer shares, registered on a CommandLine, so that the harness and
// the peers parse them identically: sweep (-b -e -f -i), iterations (-n -w -m -c -a --iter-bytes),
// ranks (-g), JSON (-J).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/report/cli.h"
#include "bench/report/iteration.h"
#include "bench/report/report_types.h"

namespace cclab::bench {

// Most ranks a tool accepts (threads on one machine): far above the 2..16 these tools are meant for.
inline constexpr int kMaxRanks = 1024;

void addSweepFlags(CommandLine& cli, SweepOptions& sweep);
void addIterationFlags(CommandLine& cli, IterationOptions& it);
void addRanksFlag(CommandLine& cli, int& nranks);  // -g/--ngpus: ranks in [1, kMaxRanks]
void addJsonFlag(CommandLine& cli, std::string& path);

// The sweep's own checks (conventions::sweepCount: order, zero start with -f, too many sizes) as a
// UsageError.
void validate(const SweepOptions& sweep);
// Every size of the sweep; the same checks first.
std::vector<std::int64_t> sizesOf(const SweepOptions& sweep);

// The size flag's value: conventions::parseSize as a UsageError naming `flag`.
std::int64_t parseSizeFlag(std::string_view text, std::string_view flag);

}  // namespace cclab::bench
