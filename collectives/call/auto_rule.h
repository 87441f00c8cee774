// auto: the algorithm a call runs when it asks for none (docs/collectives.md, "auto"). The thresholds
// are measurements of this project's benchmarks; each names the command that makes it and the section
// of docs/results/cpu-peers.md that holds its table ("Small-message thresholds: where the constants
// come from"). Backends reach the rule through Communicator::resolve.
#pragma once

#include <cstddef>

#include "collectives/call/vocabulary.h"
#include "collectives/plan/plan.h"

namespace cclab {

// The rule shared by all backends: allreduce messages up to kAutoTinyBytes use recursive doubling
// (log2 p steps, whole vectors), up to kAutoSmallBytes on more than two ranks recursive
// halving-doubling (2·log2 p steps, halving volumes), larger ones the ring (bandwidth-optimal); other
// collectives use their ring/chain. From host measurements at 4 ranks (`bench/compare_peers`): rd
// beats rhd up to 16 KiB, rhd beats the ring up to 64 KiB.
inline constexpr std::size_t kAutoTinyBytes = 16 * 1024;
inline constexpr std::size_t kAutoSmallBytes = 64 * 1024;
plan::Algorithm autoAlgorithm(const CollectiveArgs& args, int nranks);

// Small allreduces on a backend's LL path, where a one-step algorithm beats the rule above: auto takes
// oneshot up to `oneshotBytes` and twoshot up to `twoshotBytes` (largest buffer), at the row of the
// largest measured rank count <= nranks; above the last row's rank count, above these sizes and on
// backends without a table, the rule above. 0: never.
struct HostAutoSmallRow {
  int nranks;
  std::size_t oneshotBytes;
  std::size_t twoshotBytes;
};
// The host backend (collectives/host/ll_path.h). Both sizes stay within the LL threshold
// (kLlDefaultMaxBytes), so these calls never reach the slot executor. From
// `CCLAB_BIND_RANKS=1 nice -n -20 bench/ll_crossover --ranks 2 3 4 8 --max 16K --rounds 3`: oneshot up
// to the largest size up to which it stayed within 25% of the fastest of the 7 columns (oneshot,
// twoshot, rd, rhd, ring on LL; rd, ring on the slots) at every size, then twoshot likewise. The 4-
// and 8-rank rows (more ranks than cores where they were measured) are noise-dominated; they keep the
// rule above but for twoshot at 8 ranks up to 16 B.
inline constexpr HostAutoSmallRow kHostAutoSmall[] = {
    {2, 512, 512},
    {3, 64, 64},
    {4, 0, 0},
    {8, 0, 16},
};
// The process backend's LL rings (collectives/proc/shm_ll.cc), read the same way. From `mpirun
// --oversubscribe -np N all_reduce_perf --algo A -b 8 -e 1K -f 2 -n 3000 -w 300` for A in rd, oneshot,
// twoshot, 2 rounds: at 2 ranks rd and oneshot tie, so rd stays; at 4 ranks (more ranks than cores)
// oneshot, one step instead of rd's two, was fastest or within 25% of the fastest in both rounds up
// to 128 B. The 4-rank cells moved 2-3x between rounds.
inline constexpr HostAutoSmallRow kProcAutoSmall[] = {
    {2, 0, 0},
    {4, 128, 0},
};
plan::Algorithm autoAlgorithm(const CollectiveArgs& args, int nranks, Backend backend);

}  // namespace cclab
