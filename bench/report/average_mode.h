// nccl-tests' -a/--average: how the per-rank times of one measurement combine into the reported time
// when ranks time themselves (processes or threads): 0 = rank 0's, 1 = the mean (default), 2 = the
// minimum, 3 = the maximum. In the harness one thread drives every rank with a group call and times
// the whole group, so all modes report the same number there; the peers (one timer per rank) honour it.
#pragma once

#include <span>
#include <string_view>

namespace cclab::bench {

enum class AverageMode : int { Rank0 = 0, Mean = 1, Min = 2, Max = 3 };

AverageMode parseAverageMode(std::string_view text);  // "0".."3"; throws UsageError
std::string_view name(AverageMode m);                  // "rank0", "avg", "min", "max"
double combineTimes(AverageMode m, std::span<const double> perRank);

}  // namespace cclab::bench
