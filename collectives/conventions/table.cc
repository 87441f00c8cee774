// The nccl-tests table printer shared by bench and cclab-sim (table.h).
#include "collectives/conventions/table.h"

#include <cmath>

#include <fmt/format.h>

namespace cclab::conventions {
namespace {

// Column widths of nccl-tests' Reporter.
constexpr int kSizeWidth = 12, kCountWidth = 12, kTypeWidth = 8, kOpWidth = 6, kRootWidth = 6;
constexpr int kTimeWidth = 7, kBwWidth = 6, kWrongWidth = 5;
constexpr int kBwDecimals = 2;
// A fixed-point number may push its column this many characters wider (as printf does in nccl-tests:
// 1234.56 GB/s); beyond that it is printed as "1.00e+308".
constexpr int kOverflowSlack = 3;
constexpr int kScientificDecimals = 2;
constexpr int kAvgDecimals = 4;
// One group: "  time  algbw  busbw  #wrong".
constexpr int kGroupWidth = 2 + kTimeWidth + 2 + kBwWidth + 2 + kBwWidth + 2 + kWrongWidth;

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string trimmed(std::string s) { return s.substr(s.find_first_not_of(' ')); }

std::string leftColumns(std::string_view size, std::string_view count, std::string_view type, std::string_view op,
                        std::string_view root) {
  return fmt::format("# {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}", size, kSizeWidth - 2, count, kCountWidth, type,
                     kTypeWidth, op, kOpWidth, root, kRootWidth);
}

std::string measurementColumns(const Measurement& m, const std::string& unchecked) {
  const std::string wrong = m.wrong ? std::to_string(*m.wrong) : unchecked;
  return fmt::format("  {:>{}}  {}  {}  {:>{}}", formatTimeUs(m.timeUs), kTimeWidth,
                     formatNumber(m.algBw, kBwWidth, kBwDecimals), formatNumber(m.busBw, kBwWidth, kBwDecimals), wrong,
                     kWrongWidth);
}

}  // namespace

std::string formatNumber(double value, int width, int decimals) {
  if (std::isnan(value)) return fmt::format("{:>{}}", "nan", width);
  if (std::isinf(value)) return fmt::format("{:>{}}", value > 0 ? "inf" : "-inf", width);
  std::string fixed = fmt::format("{:>{}.{}f}", value, width, decimals);
  if (static_cast<int>(fixed.size()) <= width + kOverflowSlack) return fixed;
  return fmt::format("{:>{}.{}e}", value, width, kScientificDecimals);
}

std::string formatTimeUs(double us) {
  constexpr double kWholeFrom = 10000.0;
  constexpr double kOneDecimalFrom = 100.0;
  const int decimals = us >= kWholeFrom ? 0 : us >= kOneDecimalFrom ? 1 : 2;
  return formatNumber(us, kTimeWidth, decimals);
}

std::string Table::headerLine(std::string_view line) { return rstrip("# " + std::string(line)) + "\n"; }

std::string Table::columnHeader() const {
  std::string groups = leftColumns("", "", "", "", "");
  std::string names = leftColumns("size", "count", "type", "redop", "root");
  std::string units = leftColumns("(B)", "(elements)", "", "", "");
  for (const std::string& g : style_.groups) {
    groups += fmt::format("{:^{}}", g, kGroupWidth);
    names += fmt::format("  {:>{}}  {:>{}}  {:>{}} {:>{}}", "time", kTimeWidth, "algbw", kBwWidth, "busbw", kBwWidth,
                         "#wrong", kWrongWidth + 1);
    units += fmt::format("  {:>{}}  {:>{}}  {:>{}}  {:>{}}", "(us)", kTimeWidth, "(GB/s)", kBwWidth, "(GB/s)", kBwWidth,
                         "", kWrongWidth);
  }
  return rstrip(groups) + "\n" + rstrip(names) + "\n" + rstrip(units) + "\n";
}

std::string Table::row(const ResultRow& r) const {
  std::string line = fmt::format("{:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}", r.sizeBytes, kSizeWidth, r.count, kCountWidth,
                                 r.type, kTypeWidth, r.redop, kOpWidth, r.root, kRootWidth);
  line += measurementColumns(r.outOfPlace, style_.unchecked);
  if (style_.groups.size() > 1) line += measurementColumns(r.inPlace, style_.unchecked);
  return line + "\n";
}

std::string Table::footer(const ResultLog& log) const {
  if (style_.predicted)
    return "# Out of bounds values : - (predicted, not checked)\n" +
           fmt::format("# Avg bus bandwidth    : {} (predicted)\n#\n", trimmed(formatNumber(log.avgBusBw(), kSizeWidth, kAvgDecimals)));
  const int failed = log.failedChecks();
  return fmt::format("# Out of bounds values : {} {}\n# Avg bus bandwidth    : {:g}\n#\n", failed,
                     failed ? "FAILED" : "OK", log.avgBusBw());
}

void TablePrinter::put(const std::string& text) const {
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
}

}  // namespace cclab::conventions
