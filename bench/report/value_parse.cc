// parseInteger (value_parse.h): the whole string must be a decimal integer in range.
#include "bench/report/value_parse.h"

#include <charconv>
#include <string>

#include "bench/report/usage_error.h"

namespace cclab::bench {

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

}  // namespace cclab::bench
