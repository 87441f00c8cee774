#include "bench/report/table.h"

#include <array>

namespace cclab::bench {
namespace {

// Removes the trailing blanks that nccl-tests' fixed-width header formats leave.
std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

template <typename... Args>
std::string format(const char* fmt, Args... args) {
  std::array<char, 512> buf{};
  std::snprintf(buf.data(), buf.size(), fmt, args...);
  return buf.data();
}

std::string measurementColumns(const Measurement& m) {
  const std::string wrong = m.wrong ? std::to_string(*m.wrong) : "N/A";
  return format("  %7s  %6.2f  %6.2f  %5s", formatTimeUs(m.timeUs).c_str(), m.algBw, m.busBw, wrong.c_str());
}

}  // namespace

std::string formatTimeUs(double us) {
  constexpr double kWholeFrom = 10000.0;
  constexpr double kOneDecimalFrom = 100.0;
  if (us >= kWholeFrom) return format("%7.0f", us);
  if (us >= kOneDecimalFrom) return format("%7.1f", us);
  return format("%7.2f", us);
}

void TablePrinter::headerLine(std::string_view line) const {
  std::fprintf(out_, "%s\n", rstrip("# " + std::string(line)).c_str());
}

void TablePrinter::columnHeader() const {
  const std::string groups = format("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place", "",
                                    "", "", "", "");
  const std::string names = format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s", "size", "count",
                                   "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                                   "#wrong");
  const std::string units = format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s", "(B)",
                                   "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  std::fprintf(out_, "%s\n%s\n%s\n", rstrip(groups).c_str(), rstrip(names).c_str(), rstrip(units).c_str());
  std::fflush(out_);
}

void TablePrinter::row(const ResultRow& r) const {
  std::fprintf(out_, "%12lld  %12lld  %8s  %6s  %6d%s%s\n", static_cast<long long>(r.sizeBytes),
               static_cast<long long>(r.count), r.type.c_str(), r.redop.c_str(), r.root,
               measurementColumns(r.outOfPlace).c_str(), measurementColumns(r.inPlace).c_str());
  std::fflush(out_);
}

void TablePrinter::footer(const ResultLog& log) const {
  const int failed = log.failedChecks();
  std::fprintf(out_, "# Out of bounds values : %d %s\n", failed, failed ? "FAILED" : "OK");
  std::fprintf(out_, "# Avg bus bandwidth    : %g\n#\n", log.avgBusBw());
  std::fflush(out_);
}

}  // namespace cclab::bench
