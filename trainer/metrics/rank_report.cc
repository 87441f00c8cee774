// analyzeRanks: per-rank figures, arrival order at each allreduce, and the straggler rule.
#include "trainer/metrics/rank_report.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "fmt/format.h"
#include "trainer/run/clock.h"

namespace cclab::trainer {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Sums {
  std::int64_t steps = 0, compute = 0, exposed = 0, wait = 0, throttled = 0, injected = 0;
};

}  // namespace

std::vector<int> RankReport::stragglers() const {
  std::vector<int> out;
  for (const RankFigures& f : ranks)
    if (f.straggler) out.push_back(f.rank);
  return out;
}

std::string stragglerRule() {
  return fmt::format("a rank last at > {:.0f}% of the allreduces whose device compute (CPU time + injected delay) "
                     "is >= {:.2f}x the other ranks' median",
                     100.0 * kStragglerLastShare, kStragglerMinSlowdown);
}

RankReport analyzeRanks(const RunResult& run, int workers) {
  RankReport report;
  std::vector<Sums> sums(static_cast<std::size_t>(std::max(workers, 0)));
  for (const StepRecord& r : run.steps) {
    if (r.rank < 0 || r.rank >= workers) continue;
    Sums& s = sums[static_cast<std::size_t>(r.rank)];
    ++s.steps;
    s.compute += r.computeNs;
    s.exposed += r.exposedCommNs;
    s.wait += r.waitNs;
    s.throttled += r.throttledNs;
    s.injected += r.injectedNs;
  }
  for (int k = 0; k < workers; ++k) {
    const Sums& s = sums[static_cast<std::size_t>(k)];
    RankFigures f;
    f.rank = k;
    f.steps = s.steps;
    if (s.steps > 0) {
      const double n = static_cast<double>(s.steps) * kNsPerUs;
      f.computeUs = static_cast<double>(s.compute) / n;
      f.exposedCommUs = static_cast<double>(s.exposed) / n;
      f.waitUs = static_cast<double>(s.wait) / n;
    }
    if (s.throttled > 0) f.realisedFactor = static_cast<double>(s.throttled + s.injected) / static_cast<double>(s.throttled);
    report.ranks.push_back(f);
  }
  // Slowdown: this rank's device compute per step / the median of the other ranks'. Device compute is
  // CPU time + injected delay, so a rank whose thread this shared machine descheduled more is not
  // slow. Means over the run, not per-step medians: a late wake-up makes the throttle delay less in
  // the next steps (it pays back its overshoot), so the injected delay is exact over the run only.
  std::vector<double> device(static_cast<std::size_t>(std::max(workers, 0)), 0.0);
  for (const StepRecord& r : run.steps)
    if (r.rank >= 0 && r.rank < workers)
      device[static_cast<std::size_t>(r.rank)] += static_cast<double>(r.deviceComputeNs > 0 ? r.deviceComputeNs : r.computeNs);
  for (RankFigures& f : report.ranks) {
    f.deviceComputeUs = f.steps > 0 ? device[static_cast<std::size_t>(f.rank)] / static_cast<double>(f.steps) / kNsPerUs : 0.0;
  }
  for (RankFigures& f : report.ranks) {
    std::vector<double> others;
    for (const RankFigures& g : report.ranks)
      if (g.rank != f.rank && g.steps > 0) others.push_back(g.deviceComputeUs);
    const double m = median(others);
    f.slowdown = m > 0 ? f.deviceComputeUs / m : 1.0;
  }

  // Arrival order at each bucket's allreduce: the last rank to arrive makes the others wait.
  std::map<std::tuple<int, std::int64_t, int>, std::vector<const BucketArrival*>> byBucket;
  for (const BucketArrival& a : run.arrivals)
    if (a.rank >= 0 && a.rank < workers) byBucket[{a.epoch, a.step, a.bucket}].push_back(&a);
  for (const auto& [key, ranks] : byBucket) {
    if (ranks.size() < 2) continue;
    ++report.allreduces;
    const BucketArrival* last = *std::max_element(
        ranks.begin(), ranks.end(), [](const BucketArrival* a, const BucketArrival* b) { return a->arriveNs < b->arriveNs; });
    RankFigures& f = report.ranks[static_cast<std::size_t>(last->rank)];
    ++f.lastArrivals;
    for (const BucketArrival* a : ranks) f.causedWaitUs += static_cast<double>(last->arriveNs - a->arriveNs) / kNsPerUs;
  }
  report.detectable = workers >= 2 && report.allreduces > 0;
  for (RankFigures& f : report.ranks) {
    if (report.allreduces > 0) f.lastShare = static_cast<double>(f.lastArrivals) / static_cast<double>(report.allreduces);
    f.straggler = report.detectable && f.lastShare > kStragglerLastShare && f.slowdown >= kStragglerMinSlowdown;
  }
  return report;
}

std::vector<ArrivalOrder> arrivalOrders(const RunResult& run) {
  std::map<std::tuple<int, std::int64_t, int>, std::vector<const BucketArrival*>> byBucket;
  for (const BucketArrival& a : run.arrivals) byBucket[{a.epoch, a.step, a.bucket}].push_back(&a);
  std::vector<ArrivalOrder> out;
  out.reserve(byBucket.size());
  for (auto& [key, ranks] : byBucket) {
    std::stable_sort(ranks.begin(), ranks.end(),
                     [](const BucketArrival* a, const BucketArrival* b) { return a->arriveNs < b->arriveNs; });
    ArrivalOrder o{std::get<0>(key), std::get<1>(key), std::get<2>(key), {}};
    for (const BucketArrival* a : ranks) o.order.push_back(a->rank);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace cclab::trainer
