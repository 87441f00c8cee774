// One row of a nccl-tests table: a size, measured (or predicted) out of place and in place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cclab::conventions {

struct Measurement {
  double timeUs = 0;                  // average time of one collective, microseconds
  double algBw = 0;                   // GB/s (1e9 B/s)
  double busBw = 0;                   // GB/s
  std::optional<std::int64_t> wrong;  // wrong elements over all ranks; empty when not checked (-c 0)
};

struct ResultRow {
  std::int64_t sizeBytes = 0;
  std::int64_t count = 0;
  std::string type;   // "float"
  std::string redop;  // "sum", or "none" where the collective does not reduce
  int root = -1;      // -1 where the collective has no root
  Measurement outOfPlace;
  Measurement inPlace;
};

// Everything a table footer and a JSON file need from a finished (or interrupted) run.
class ResultLog {
 public:
  void add(ResultRow row) { rows_.push_back(std::move(row)); }
  [[nodiscard]] const std::vector<ResultRow>& rows() const { return rows_; }
  // nccl-tests' "Avg bus bandwidth": the mean busbw over every measurement (out and in place).
  [[nodiscard]] double avgBusBw() const;
  // nccl-tests' "Out of bounds values": the number of measurements with #wrong > 0.
  [[nodiscard]] int failedChecks() const;

 private:
  std::vector<ResultRow> rows_;
};

}  // namespace cclab::conventions
