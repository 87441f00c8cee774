// Memory needed against memory available (memory_budget.h).
#include "collectives/conventions/memory_budget.h"

#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "collectives/core/errors.h"

namespace cclab::conventions {
namespace {

constexpr std::int64_t kBytesPerKiB = 1024;
constexpr double kBytesPerGiB = 1024.0 * 1024 * 1024;

std::string shown(std::int64_t bytes) {
  return fmt::format("{} bytes ({:.1f} GiB)", bytes, static_cast<double>(bytes) / kBytesPerGiB);
}

}  // namespace

std::optional<std::int64_t> memAvailableOf(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  const auto at = meminfo.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = meminfo.substr(at + kKey.size());
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  std::int64_t kib = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), kib);
  if (ec != std::errc() || kib < 0 || kib > std::numeric_limits<std::int64_t>::max() / kBytesPerKiB) return std::nullopt;
  const std::string_view unit(end, static_cast<std::size_t>(rest.data() + rest.size() - end));
  if (unit.substr(0, 3) != " kB") return std::nullopt;
  return kib * kBytesPerKiB;
}

std::optional<std::int64_t> hostMemoryAvailable() {
  std::ifstream in("/proc/meminfo");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return memAvailableOf(text.str());
}

std::int64_t saturatingBytes(std::int64_t count, std::int64_t bytes, std::int64_t extra) {
  std::int64_t product = 0, sum = 0;
  if (__builtin_mul_overflow(count, bytes, &product) || __builtin_add_overflow(product, extra, &sum))
    return std::numeric_limits<std::int64_t>::max();
  return sum;
}

void requireMemory(std::int64_t needed, std::int64_t available, std::string_view what, std::string_view where) {
  if (needed <= available) return;
  throw InvalidArgument(fmt::format("{} needs {} of {}, only {} are available", what, shown(needed), where,
                                    shown(available)));
}

}  // namespace cclab::conventions
