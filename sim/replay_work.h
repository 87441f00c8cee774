// The replay work of a whole command, counted before it starts. `scale --model replay` replays every
// algorithm at every node count, `compare --model replay` every row of every run, `calibrate` every
// point at every step of its fit and of each cross-validation fold: each replay alone is within
// kMaxReplayOpSlices, but together they ran for hours (a 3000-run log: about 9 h) with nothing said.
// One rule for all three: the op-slices of every replay the command will make (Predictor::replayOpSlices,
// replayOpSlices in replay.h, the unit that bounds one replay) are added up first, and a command past
// kMaxCommandOpSlices is refused in one line with the total, the limit and what to do instead.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>

#include "sim/predictor.h"

namespace cclab::sim {

// The most op-slices one command replays in all. The count is an upper bound (every protocol run of
// `auto` in full, every step a fit may take), and the replays a command makes are small ones whose
// fixed costs weigh: on a loaded 2-core machine `scale --model replay --nodes 1..64` counts 5.8e7 and
// takes 31 s, `compare --model replay` of a 3-run H100 log (14 sizes, ring, tree and nvls) 5.1e7 and
// 39 s. So 2e8 is two to three minutes of replay, as kMaxReplayOpSlices is for one large replay.
inline constexpr std::int64_t kMaxCommandOpSlices = 200'000'000;

class ReplayWork {
 public:
  // `times` replays of `opSlices` op-slices each.
  void add(std::int64_t opSlices, std::int64_t times = 1);
  // One prediction of `predictor` (nothing where it is analytic), `times` times. A prediction asked
  // again (compare: the same sizes in every run) is counted from the first time's count.
  void add(const Predictor& predictor, plan::Collective c, SimAlgorithm a, int p, std::int64_t count, std::int64_t times = 1);
  [[nodiscard]] std::int64_t total() const { return total_; }
  // Throws InvalidArgument (conventions::requireAtMost) when the total is past kMaxCommandOpSlices:
  // "<what> is <total>, more than the limit of 1000000000 (<why>; <instead>)".
  void require(std::string_view what, std::string_view instead) const;

 private:
  std::int64_t total_ = 0;
  bool lowerBound_ = false;  // one replay was counted only up to kMaxReplayOpSlicesRaised
  using Key = std::tuple<const Topology*, int, plan::Collective, SimAlgorithm, int, std::int64_t, std::int64_t, int, std::int64_t, int, ProtocolChoice>;
  std::map<Key, std::int64_t> seen_;
};

}  // namespace cclab::sim
