#include "trainer/device/virtual_timeline.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

#include "collectives/core/errors.h"
#include "trainer/run/clock.h"

namespace cclab::trainer {
namespace {

using StepKey = std::pair<int, std::int64_t>;  // (epoch, step)

std::int64_t ns(double t) { return std::llround(t); }

// Real communication time of each (epoch, step, bucket) on each rank: its end minus the last arrival.
std::map<std::tuple<int, std::int64_t, int>, std::vector<double>> realBusy(const std::vector<BucketArrival>& arrivals,
                                                                           int workers) {
  std::map<std::tuple<int, std::int64_t, int>, std::vector<const BucketArrival*>> byBucket;
  for (const BucketArrival& a : arrivals) byBucket[{a.epoch, a.step, a.bucket}].push_back(&a);
  std::map<std::tuple<int, std::int64_t, int>, std::vector<double>> busy;
  for (const auto& [key, list] : byBucket) {
    std::int64_t last = 0;
    for (const BucketArrival* a : list) last = std::max(last, a->arriveNs);
    std::vector<double> b(static_cast<std::size_t>(workers), 0.0);
    for (const BucketArrival* a : list) b[static_cast<std::size_t>(a->rank)] = static_cast<double>(std::max<std::int64_t>(0, a->endNs - last));
    busy[key] = std::move(b);
  }
  return busy;
}

}  // namespace

double DeviceCosts::stepComputeNs() const {
  const double backward = std::accumulate(backwardNs.begin(), backwardNs.end(), 0.0);
  return static_cast<double>(microBatches) * (forwardNs + backward) + updateNs;
}

DeviceCosts deviceCosts(const GradientUnits& units, const ComputeModel& model, std::int64_t microBatch, int microBatches) {
  if (!model.active()) throw InvalidArgument("deviceCosts: no compute model");
  DeviceCosts c;
  const auto b = static_cast<double>(microBatch);
  c.forwardNs = model.ns(units.forwardFlopsPerSample() * b);
  for (const GradientUnit& u : units.units()) c.backwardNs.push_back(model.ns(u.backwardFlops * b));
  c.microBatches = microBatches;
  c.updateNs = model.ns(units.updateFlops());
  return c;
}

void applyVirtualClock(RunResult& run, const DeviceCosts& costs, const std::vector<Bucket>& buckets, const VirtualRun& v) {
  const auto W = static_cast<std::size_t>(v.workers);
  std::map<StepKey, std::vector<StepRecord*>> bySteps;
  for (StepRecord& r : run.steps) {
    auto& list = bySteps[{r.epoch, r.step}];
    list.resize(W, nullptr);
    list[static_cast<std::size_t>(r.rank)] = &r;
  }
  const auto busy = realBusy(run.arrivals, v.workers);
  const int units = static_cast<int>(costs.backwardNs.size());
  const double backwardNs = std::accumulate(costs.backwardNs.begin(), costs.backwardNs.end(), 0.0);
  const double baseCompute = costs.stepComputeNs();

  std::vector<BucketArrival> arrivals;
  std::vector<double> end(W, 0.0);
  std::map<int, std::pair<double, double>> epochSpan;  // epoch -> (start, end)
  std::map<int, std::int64_t> epochSamples;
  int epoch = -1;
  for (auto& [key, ranks] : bySteps) {
    if (std::any_of(ranks.begin(), ranks.end(), [](const StepRecord* r) { return r == nullptr; }))
      throw Error("virtual clock: a step without every rank's record");
    if (key.first != epoch) {  // the evaluation barrier
      epoch = key.first;
      const double t = *std::max_element(end.begin(), end.end());
      std::fill(end.begin(), end.end(), t);
      epochSpan[epoch] = {t, t};
    }
    std::vector<double> start = end, backwardEnd(W), ready(W * buckets.size()), commFree(W);
    for (std::size_t r = 0; r < W; ++r) {
      const double f = v.factor[r];
      double t = start[r] + f * (static_cast<double>(costs.microBatches - 1) * (costs.forwardNs + backwardNs) + costs.forwardNs);
      std::vector<double> unitDone(static_cast<std::size_t>(units));
      for (int u = units - 1; u >= 0; --u) {
        t += f * costs.backwardNs[static_cast<std::size_t>(u)];
        unitDone[static_cast<std::size_t>(u)] = t;
      }
      backwardEnd[r] = t;
      commFree[r] = start[r];
      for (std::size_t b = 0; b < buckets.size(); ++b)
        ready[r * buckets.size() + b] = v.overlap ? unitDone[static_cast<std::size_t>(buckets[b].firstLayer)] : t;
    }
    std::vector<double> done = backwardEnd;
    if (v.workers > 1) {
      for (std::size_t b = 0; b < buckets.size(); ++b) {
        const auto found = busy.find({key.first, key.second, static_cast<int>(b)});
        if (found == busy.end()) throw Error("virtual clock: a bucket without arrivals");
        std::vector<double> call(W);
        for (std::size_t r = 0; r < W; ++r) call[r] = std::max(ready[r * buckets.size() + b], commFree[r]);
        const double last = *std::max_element(call.begin(), call.end());
        for (std::size_t r = 0; r < W; ++r) {
          commFree[r] = last + found->second[r];
          done[r] = std::max(done[r], commFree[r]);
          arrivals.push_back({key.first, key.second, static_cast<int>(b), static_cast<int>(r), ns(call[r]), ns(commFree[r])});
        }
      }
    }
    for (std::size_t r = 0; r < W; ++r) {
      StepRecord& rec = *ranks[r];
      const double f = v.factor[r];
      end[r] = done[r] + f * costs.updateNs;
      rec.startNs = ns(start[r]);
      rec.readyNs = ns(backwardEnd[r]);
      rec.doneNs = ns(done[r]);
      rec.endNs = ns(end[r]);
      rec.computeNs = (rec.readyNs - rec.startNs) + (rec.endNs - rec.doneNs);
      rec.throttledNs = f != 1.0 ? ns(baseCompute) : 0;
      rec.injectedNs = f != 1.0 ? ns((f - 1.0) * baseCompute) : 0;
      rec.deviceComputeNs = ns(f * baseCompute);
      rec.exposedCommNs = rec.waitNs = rec.commBusyNs = rec.overlappedNs = rec.peerWaitNs = 0;
      epochSamples[key.first] += rec.samples;
    }
    epochSpan[epoch].second = *std::max_element(end.begin(), end.end());
  }
  run.arrivals = std::move(arrivals);
  double total = 0.0;
  for (EpochRecord& e : run.epochs) {
    const auto span = epochSpan.find(e.epoch);
    const double epochNs = span == epochSpan.end() ? 0.0 : span->second.second - span->second.first;
    total += epochNs;
    e.trainTimeS = total / kNsPerS;
    e.samplesPerS = epochNs > 0 ? static_cast<double>(epochSamples[e.epoch]) / (epochNs / kNsPerS) : 0.0;
  }
  run.trainTimeS = total / kNsPerS;
}

}  // namespace cclab::trainer
