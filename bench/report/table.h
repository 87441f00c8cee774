// nccl-tests' stdout table (src/common.cu, Reporter): '#' header lines, the two column-header lines,
// one row per size with out-of-place then in-place (time algbw busbw #wrong), and the footer.
//
//   #       size         count      type   redop    root     time   algbw   busbw #wrong     time ...
//   #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us) ...
//            8             2     float     sum      -1     5.10    0.00    0.00      0     4.98 ...
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 1.234
//
// Every tool (the harness and the peers) prints through this one class.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "bench/report/result.h"

namespace cclab::bench {

class TablePrinter {
 public:
  explicit TablePrinter(std::FILE* out) : out_(out) {}
  // "# " + line, for the run description above the table.
  void headerLine(std::string_view line) const;
  void columnHeader() const;
  void row(const ResultRow& r) const;
  void footer(const ResultLog& log) const;

 private:
  std::FILE* out_;
};

// nccl-tests' time column: %7.0f from 10 ms, %7.1f from 100 us, else %7.2f.
std::string formatTimeUs(double us);

}  // namespace cclab::bench
