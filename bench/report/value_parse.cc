#include "bench/report/value_parse.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "bench/report/usage_error.h"

namespace cclab::bench {
namespace {

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// The multiplier of a unit suffix: "", "K", "KB", "KiB" (and M, G; any case); 0 when unknown.
std::int64_t unitOf(std::string_view suffix) {
  if (suffix.empty() || equalsIgnoreCase(suffix, "B")) return 1;
  constexpr std::int64_t kKiB = 1024;
  const std::int64_t base = [&] {
    switch (std::toupper(static_cast<unsigned char>(suffix.front()))) {
      case 'K': return kKiB;
      case 'M': return kKiB * kKiB;
      case 'G': return kKiB * kKiB * kKiB;
      default: return std::int64_t{0};
    }
  }();
  const std::string_view rest = suffix.substr(1);
  if (rest.empty() || equalsIgnoreCase(rest, "B") || equalsIgnoreCase(rest, "iB")) return base;
  return 0;
}

}  // namespace

std::int64_t parseSize(std::string_view text) {
  const std::string shown(text);
  if (text.empty()) throw UsageError("empty size");
  if (text.front() == '-') throw UsageError("size '" + shown + "' is negative");
  std::size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.')) ++digits;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value, std::chars_format::fixed);
  const std::int64_t unit = unitOf(text.substr(digits));
  if (digits == 0 || ec != std::errc() || end != text.data() + digits || unit == 0)
    throw UsageError("'" + shown + "' is not a size (a number with an optional K, M or G suffix)");
  const double bytes = value * static_cast<double>(unit);
  constexpr double kMaxBytes = static_cast<double>(std::int64_t{1} << 50);  // 1 PiB: far beyond any buffer here
  if (!std::isfinite(bytes) || bytes > kMaxBytes) throw UsageError("size '" + shown + "' is too large");
  return static_cast<std::int64_t>(bytes);
}

std::int64_t parseInteger(std::string_view text, std::int64_t min, std::int64_t max, std::string_view what) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw UsageError("'" + std::string(text) + "' is not an integer (" + std::string(what) + ")");
  if (value < min || value > max)
    throw UsageError(std::string(what) + " must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                     std::to_string(value));
  return value;
}

std::string formatBytes(std::int64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + kUnits[unit];
}

}  // namespace cclab::bench
