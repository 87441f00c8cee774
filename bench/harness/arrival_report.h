// The per-rank arrival report printed after the main table of every *_perf run, and its -J form:
// per rank, the timed calls observed, mean and max lateness (arrival - first arrival of the call, on
// the backend's steady clock) and the share of calls in which it arrived last. Warm-up and check calls
// are not counted. Backends that do not record arrivals (cuda, nccl) get one line saying so.
//
//   # Arrivals at the timed calls (lateness = arrival - first arrival in the call; host steady clock)
//   #  rank     calls  mean late (us)   max late (us)  last share
//   #     0       120            1.52           14.20       0.025
//   #     1       120         2003.10         2090.55       0.975
//
// Every line starts with '#', so nccl-tests-style parsers of the main table skip it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/communicator.h"

namespace cclab::bench {

class ArrivalReport {
 public:
  explicit ArrivalReport(Backend backend) : backend_(backend) {}

  // Adds one measurement's stats (arrivalStats() after its timed calls); nullopt: not recorded.
  void add(const std::optional<ArrivalStats>& stats);
  // The merged stats, or nullopt when the backend recorded none.
  [[nodiscard]] const std::optional<ArrivalStats>& total() const { return total_; }

  // The report's lines, without the "# " that TablePrinter::headerLine adds.
  [[nodiscard]] std::vector<std::string> lines() const;
  // {"recorded":true,"clock":"steady","calls":N,"incomplete":false,"ranks":[{"rank","calls",
  //  "mean_lateness_us","max_lateness_us","last_count","last_share"}]}, or
  // {"recorded":false,"reason":"not recorded by the cuda backend"}.
  [[nodiscard]] nlohmann::json json() const;

 private:
  [[nodiscard]] std::string notRecorded() const;

  Backend backend_;
  bool sawUnrecorded_ = false;
  std::optional<ArrivalStats> total_;
};

}  // namespace cclab::bench
