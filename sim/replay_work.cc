// ReplayWork: a command's replays added up before it starts (replay_work.h).
#include "sim/replay_work.h"

#include <limits>
#include <string>

#include "collectives/conventions/limits.h"

namespace cclab::sim {
namespace {

// Far past any limit and far from overflowing: a total this large is reported as it stands.
constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max() / 4;

}  // namespace

void ReplayWork::add(std::int64_t opSlices, std::int64_t times) {
  if (opSlices <= 0 || times <= 0) return;
  total_ = opSlices > (kSaturated - total_) / times ? kSaturated : total_ + opSlices * times;
}

void ReplayWork::add(const Predictor& pr, plan::Collective c, SimAlgorithm a, int p, std::int64_t count, std::int64_t times) {
  const Key key{&pr.topo, pr.topo.nranks(), c, a, p, count, pr.elemSize, pr.root, pr.sliceBytes, pr.channels, pr.protocol};
  auto [at, fresh] = seen_.try_emplace(key, 0);
  // Counted up to the most a replay may be raised to: past it the replay itself is refused, and a count
  // stopped there keeps the estimate cheap (a plan's ops, not its op-slices, are scanned).
  if (fresh) at->second = pr.replayOpSlices(c, a, p, count, kMaxReplayOpSlicesRaised);
  if (at->second > kMaxReplayOpSlicesRaised) lowerBound_ = true;
  add(at->second, times);
}

void ReplayWork::require(std::string_view what, std::string_view instead) const {
  // A replay counted only up to its cap makes the total a lower bound, and the line says so.
  conventions::requireAtMost(total_, kMaxCommandOpSlices, (lowerBound_ ? "a lower bound of " : "") + std::string(what),
                             "2e8 op-slices are two to three minutes of replays; " + std::string(instead));
}

}  // namespace cclab::sim
