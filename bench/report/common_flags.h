// The flags every *_perf tool and peer shares, registered on a CommandLine, so that the harness and
// the peers parse them identically: sweep (-b -e -f -i), iterations (-n -w -m -c -a --iter-bytes),
// ranks (-g), JSON (-J).
#pragma once

#include <string>

#include "bench/report/command_line.h"
#include "bench/report/iteration.h"
#include "bench/report/sweep.h"

namespace cclab::bench {

// Most ranks a tool accepts (threads on one machine): far above the 2..16 these tools are meant for.
inline constexpr int kMaxRanks = 1024;

void addSweepFlags(CommandLine& cli, SweepOptions& sweep);
void addIterationFlags(CommandLine& cli, IterationOptions& it);
void addRanksFlag(CommandLine& cli, int& nranks);  // -g/--ngpus: ranks in [1, kMaxRanks]
void addJsonFlag(CommandLine& cli, std::string& path);

}  // namespace cclab::bench
