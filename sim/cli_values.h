// Values cclab-sim's command line takes apart beyond what CLI11 does: comma lists, rank/node ranges,
// and the straggler of `cclab-sim straggler` from its flags or from `--straggler RANK:KEY=VALUE`.
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "collectives/core/straggler.h"

namespace cclab::sim {

// "a,b,,c" -> {a, b, c}.
std::vector<std::string> splitList(const std::string& s);

// Largest node count `scale` accepts: a cluster of 2^16 nodes of 8 GPUs is half a million ranks, which
// the analytic model prices instantly but no replay or real run reaches.
inline constexpr int kMaxScaleNodes = 1 << 16;
// Largest rank count `scale --model replay` replays: it replays every algorithm at every node count of
// the range, and past 64 nodes of 8 GPUs (512 ranks) the default five algorithms take minutes (64 nodes:
// 36 s, 128 nodes: more than 120 s on a loaded 2-core machine); larger clusters are the analytic
// model's (or one `cclab-sim allreduce` replay's, up to kMaxReplayRanks).
inline constexpr int kMaxScaleReplayRanks = 512;
// "A..B": A, 2A, 4A, ... up to B; or a list "1,2,8". Throws InvalidArgument naming `flag` unless every
// value is in 1..kMaxScaleNodes.
std::vector<int> parseRange(const std::string& s, const std::string& flag);

// The straggler `cclab-sim straggler` studies. `text` (--straggler, parsed with
// BareNumber::ComputeAndLinkFactor: RANK:F slows compute and links by F) wins when not empty; else the
// older flags: --rank, --slowdown F (compute, and links unless computeOnly), --delay µs.
Straggler stragglerOf(const std::string& text, int rank, double slowdown, double delayUs, bool computeOnly);

}  // namespace cclab::sim

namespace cclab::sim {

// Exit status for an error that reached main: 2 for bad usage or a bad input file (InvalidArgument,
// which TopologyError and MeasuredError are, and std::invalid_argument from the size parser), 1 for a
// failure while running.
int exitCodeFor(const std::exception& e);

}  // namespace cclab::sim
