// nccl-tests' stdout table (src/common.cu, Reporter), one printer for bench and cclab-sim: '#' header
// lines, the column headers, one row per size with one column group per measurement (bench:
// out-of-place then in-place; cclab-sim: predicted), and the footer.
//
//   #       size         count      type   redop    root     time   algbw   busbw #wrong     time ...
//   #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us) ...
//              8             2     float     sum      -1     5.10    0.00    0.00      0     4.98 ...
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 1.234
//
// Numbers (formatNumber): fixed point as nccl-tests prints them while that fits the column or widens it
// by at most 3 characters (1234.56 GB/s); a finite value wider than that (a predicted 1e308 us) in
// scientific notation ("1.00e+308"), never 300 digits; a non-finite one as "inf", "-inf" or "nan",
// spelled out, never hidden.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/conventions/result.h"

namespace cclab::conventions {

struct TableStyle {
  std::vector<std::string> groups{"out-of-place", "in-place"};  // 1 (inPlace not printed) or 2
  std::string unchecked = "N/A";  // the #wrong column of a measurement that was not checked
  bool predicted = false;         // footer: "- (predicted, not checked)" and "(predicted)"
};

// Builds the table's lines (each ending in '\n').
class Table {
 public:
  explicit Table(TableStyle style = {}) : style_(std::move(style)) {}
  [[nodiscard]] static std::string headerLine(std::string_view line);  // "# " + line, trailing blanks removed
  [[nodiscard]] std::string columnHeader() const;
  [[nodiscard]] std::string row(const ResultRow& r) const;
  [[nodiscard]] std::string footer(const ResultLog& log) const;

 private:
  TableStyle style_;
};

// A Table written to a stream as it goes (flushed after every call: rows appear as they are measured).
class TablePrinter {
 public:
  explicit TablePrinter(std::FILE* out, TableStyle style = {}) : out_(out), table_(std::move(style)) {}
  void headerLine(std::string_view line) const { put(Table::headerLine(line)); }
  void columnHeader() const { put(table_.columnHeader()); }
  void row(const ResultRow& r) const { put(table_.row(r)); }
  void footer(const ResultLog& log) const { put(table_.footer(log)); }

 private:
  void put(const std::string& text) const;
  std::FILE* out_;
  Table table_;
};

// `value` right-aligned in `width` with `decimals` decimals; scientific beyond width + 3; non-finite
// values spelled out (see the top of this file).
std::string formatNumber(double value, int width, int decimals);

// nccl-tests' time column (7 wide): %.0f from 10 ms, %.1f from 100 us, else %.2f.
std::string formatTimeUs(double us);

}  // namespace cclab::conventions
