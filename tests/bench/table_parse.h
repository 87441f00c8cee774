// Parses a *_perf table back from stdout: the data rows and the footer.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cclab::bench::testing {

struct ParsedMeasurement {
  double timeUs = 0, algBw = 0, busBw = 0;
  std::optional<long long> wrong;  // empty for "N/A"
};

struct ParsedRow {
  long long size = 0, count = 0;
  std::string type, redop;
  int root = 0;
  ParsedMeasurement oop, ip;
};

struct ParsedTable {
  std::vector<std::string> headerLines;  // every '#' line before the first row
  std::vector<ParsedRow> rows;
  std::optional<int> outOfBounds;  // from "# Out of bounds values : N OK|FAILED"
  std::optional<double> avgBusBw;  // from "# Avg bus bandwidth    : X"
};

// Throws std::runtime_error naming the first line that is neither a '#' line nor a 13-column row.
ParsedTable parseTable(const std::string& stdoutText);

}  // namespace cclab::bench::testing
