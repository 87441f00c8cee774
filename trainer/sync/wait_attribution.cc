// attributeSyncWaits: splits each sync step's blocked time into peer wait and exposed communication.
#include "trainer/sync/wait_attribution.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

namespace cclab::trainer {
namespace {

std::int64_t intersect(std::int64_t a0, std::int64_t a1, std::int64_t b0, std::int64_t b1) {
  return std::max<std::int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

}  // namespace

void attributeSyncWaits(std::span<StepRecord> steps, std::span<const BucketArrival> arrivals) {
  using BucketKey = std::tuple<int, std::int64_t, int>;  // epoch, step, bucket
  using RankStepKey = std::tuple<int, int, std::int64_t>;  // rank, epoch, step
  std::map<BucketKey, std::int64_t> lastArrival;
  std::map<RankStepKey, std::vector<const BucketArrival*>> byRankStep;
  for (const BucketArrival& a : arrivals) {
    auto [it, fresh] = lastArrival.try_emplace({a.epoch, a.step, a.bucket}, a.arriveNs);
    if (!fresh) it->second = std::max(it->second, a.arriveNs);
    byRankStep[{a.rank, a.epoch, a.step}].push_back(&a);
  }
  for (StepRecord& r : steps) {
    const std::int64_t blocked = r.doneNs - r.readyNs;
    std::int64_t wait = 0, busy = 0, overlapped = 0, peerWait = 0;
    const auto found = byRankStep.find({r.rank, r.epoch, r.step});
    if (found != byRankStep.end()) {
      for (const BucketArrival* a : found->second) {
        const std::int64_t last = std::clamp(lastArrival.at({a->epoch, a->step, a->bucket}), a->arriveNs, a->endNs);
        wait += intersect(a->arriveNs, last, r.readyNs, r.doneNs);
        peerWait += last - a->arriveNs;
        busy += a->endNs - last;
        overlapped += intersect(last, a->endNs, r.startNs, r.readyNs);
      }
    }
    r.waitNs = std::clamp<std::int64_t>(wait, 0, blocked);
    r.exposedCommNs = blocked - r.waitNs;
    r.commBusyNs = busy;
    r.overlappedNs = overlapped;
    r.peerWaitNs = peerWait;
  }
}

}  // namespace cclab::trainer
