// The arrival report (arrival_report.h): merging per-measurement stats, the '#' table and the JSON.
#include "bench/harness/arrival_report.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>

namespace cclab::bench {
namespace {

double microseconds(std::chrono::nanoseconds d) { return std::chrono::duration<double, std::micro>(d).count(); }

}  // namespace

void ArrivalReport::add(const std::optional<ArrivalStats>& stats) {
  if (!stats) {
    sawUnrecorded_ = true;
    return;
  }
  if (!total_) {
    total_ = *stats;
    return;
  }
  ArrivalStats& t = *total_;
  t.calls += stats->calls;
  t.incomplete = t.incomplete || stats->incomplete;
  t.ranks.resize(std::max(t.ranks.size(), stats->ranks.size()));
  for (std::size_t r = 0; r < stats->ranks.size(); ++r) {
    const RankArrivals& s = stats->ranks[r];
    RankArrivals& a = t.ranks[r];
    a.calls += s.calls;
    a.totalLateness += s.totalLateness;
    a.maxLateness = std::max(a.maxLateness, s.maxLateness);
    a.lastCount += s.lastCount;
  }
}

std::string ArrivalReport::notRecorded() const {
  return "not recorded by the " + std::string(name(backend_)) + " backend";
}

std::vector<std::string> ArrivalReport::lines() const {
  if (!total_ || sawUnrecorded_) return {"Arrival times: " + notRecorded()};
  std::vector<std::string> out{"Arrivals at the timed calls (lateness = arrival - first arrival in the call; " +
                                   std::string(name(backend_)) + " steady clock)",
                               " rank     calls  mean late (us)   max late (us)  last share"};
  for (std::size_t r = 0; r < total_->ranks.size(); ++r) {
    const RankArrivals& a = total_->ranks[r];
    std::array<char, 128> line{};
    std::snprintf(line.data(), line.size(), "%5zu %9lld %15.2f %15.2f %11.3f", r, static_cast<long long>(a.calls),
                  a.meanLatenessUs(), microseconds(a.maxLateness), a.lastShare());
    out.emplace_back(line.data());
  }
  if (total_->incomplete)
    out.emplace_back("(incomplete: ranks ran more calls apart than the backend keeps; later calls not counted)");
  return out;
}

nlohmann::json ArrivalReport::json() const {
  if (!total_ || sawUnrecorded_) return {{"recorded", false}, {"reason", notRecorded()}};
  nlohmann::json ranks = nlohmann::json::array();
  for (std::size_t r = 0; r < total_->ranks.size(); ++r) {
    const RankArrivals& a = total_->ranks[r];
    ranks.push_back({{"rank", r},
                     {"calls", a.calls},
                     {"mean_lateness_us", a.meanLatenessUs()},
                     {"max_lateness_us", microseconds(a.maxLateness)},
                     {"last_count", a.lastCount},
                     {"last_share", a.lastShare()}});
  }
  return {{"recorded", true},
          {"clock", "steady"},
          {"calls", total_->calls},
          {"incomplete", total_->incomplete},
          {"ranks", ranks}};
}

}  // namespace cclab::bench
