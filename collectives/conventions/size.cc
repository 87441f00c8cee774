// The one size parser (size.h): digits, an optional fraction, an optional binary suffix.
#include "collectives/conventions/size.h"

#include <array>
#include <cctype>
#include <numeric>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::conventions {
namespace {

constexpr int kUnitShift = 10;  // K = 2^10, M = 2^20, ...

// log2 of a suffix's multiplier: "" or "B" -> 0, "K"/"KB"/"KiB" -> 10, ... "T.." -> 40; -1 when unknown.
int shiftOf(std::string_view suffix) {
  std::string s;
  for (char c : suffix) s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (s.empty() || s == "B") return 0;
  constexpr std::string_view kLetters = "KMGT";
  const auto letter = kLetters.find(s.front());
  if (letter == std::string_view::npos) return -1;
  const std::string rest = s.substr(1);
  if (rest.empty() || rest == "B" || rest == "IB") return static_cast<int>(letter + 1) * kUnitShift;
  return -1;
}

[[noreturn]] void refuse(std::string_view flag, std::string_view text, std::string_view why) {
  throw InvalidArgument(std::string(flag) + ": '" + std::string(text) + "' " + std::string(why));
}

}  // namespace

std::int64_t parseSize(std::string_view text, std::string_view flag) {
  constexpr std::string_view kGrammar = "is not a size (bytes, or a number with K, M, G or T = 1024^1..4)";
  std::size_t i = 0;
  std::int64_t whole = 0;
  bool anyDigit = false;
  // The integer part, checked against the limit digit by digit (no double in the way).
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    anyDigit = true;
    const int digit = text[i] - '0';
    if (whole > (kMaxSizeBytes - digit) / 10) refuse(flag, text, "is too large (the limit is 2^62 bytes)");
    whole = whole * 10 + digit;
  }
  // The fraction as digits over a power of ten: exact, so "1.5K" is 1536 and "0.3K" is refused.
  std::int64_t fracNum = 0, fracDen = 1;
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      anyDigit = true;
      if (fracDen >= std::int64_t{1000000000000}) refuse(flag, text, "has too many decimals");
      fracNum = fracNum * 10 + (text[i] - '0');
      fracDen *= 10;
    }
  }
  if (!anyDigit) {
    if (!text.empty() && text.front() == '-') refuse(flag, text, "is negative");
    refuse(flag, text, kGrammar);
  }
  const int shift = shiftOf(text.substr(i));
  if (shift < 0) refuse(flag, text, kGrammar);
  if (whole > (kMaxSizeBytes >> shift)) refuse(flag, text, "is too large (the limit is 2^62 bytes)");
  const std::int64_t bytes = whole << shift;
  // fracNum/fracDen * 2^shift must be a whole number of bytes. With g = gcd(fracDen, 2^shift) that is
  // fracNum/(fracDen/g) * (2^shift/g), exact when fracDen/g divides fracNum, and at most 2^shift.
  std::int64_t fracBytes = 0;
  if (fracNum != 0) {
    const std::int64_t unit = std::int64_t{1} << shift;
    const std::int64_t g = std::gcd(fracDen, unit);
    if (fracNum % (fracDen / g) != 0) refuse(flag, text, "is not a whole number of bytes");
    fracBytes = fracNum / (fracDen / g) * (unit / g);
  }
  if (bytes > kMaxSizeBytes - fracBytes) refuse(flag, text, "is too large (the limit is 2^62 bytes)");
  return bytes + fracBytes;
}

std::string formatBytes(std::int64_t bytes) {
  constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  constexpr std::int64_t kKiB = 1024;
  while (unit + 1 < kUnits.size() && bytes != 0 && bytes % kKiB == 0) {
    bytes /= kKiB;
    ++unit;
  }
  return std::to_string(bytes) + " " + kUnits[unit];
}

}  // namespace cclab::conventions
