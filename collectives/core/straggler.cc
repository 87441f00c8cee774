#include "collectives/core/straggler.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "collectives/core/errors.h"

namespace cclab {
namespace {

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw InvalidArgument("bad straggler '" + std::string(text) + "': " + why +
                        " (expected RANK:delay=100us, RANK:compute=1.4, RANK:link=2, or combinations with ',')");
}

double parseNumber(std::string_view text, std::string_view s, const char* what) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data() || !std::isfinite(v)) bad(text, std::string(what) + " '" + std::string(s) + "' is not a finite number");
  if (p != s.data() + s.size()) return std::nan("");  // caller decides whether a suffix is allowed
  return v;
}

double parseFactor(std::string_view text, std::string_view s, const char* what) {
  double v = parseNumber(text, s, what);
  if (std::isnan(v)) bad(text, std::string(what) + " '" + std::string(s) + "' is not a number");
  if (v < 1.0 || v > kMaxStragglerFactor)
    bad(text, std::string(what) + " factor must be in [1, " + std::to_string(static_cast<int>(kMaxStragglerFactor)) + "]");
  return v;
}

std::chrono::nanoseconds parseDelay(std::string_view text, std::string_view s) {
  std::size_t end = 0;
  while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.' || s[end] == 'e' ||
                            s[end] == 'E' || s[end] == '+' || s[end] == '-')) {
    // stop at a unit's first letter ('e' of nothing is part of a number only when followed by a digit or sign)
    if ((s[end] == 'e' || s[end] == 'E') && (end + 1 >= s.size() || !(std::isdigit(static_cast<unsigned char>(s[end + 1])) ||
                                                                      s[end + 1] == '+' || s[end + 1] == '-')))
      break;
    ++end;
  }
  double v = parseNumber(text, s.substr(0, end), "delay");
  // parseNumber's NaN means characters were left over inside the number ("0..5"): never a delay.
  if (std::isnan(v)) bad(text, "delay '" + std::string(s) + "' is not a number");
  std::string_view unit = s.substr(end);
  double ns_per = 1e3;  // bare number: µs
  if (unit == "ns") ns_per = 1;
  else if (unit == "us" || unit == "µs" || unit.empty()) ns_per = 1e3;
  else if (unit == "ms") ns_per = 1e6;
  else if (unit == "s") ns_per = 1e9;
  else bad(text, "unknown time unit '" + std::string(unit) + "' (ns, us, ms, s)");
  if (v < 0) bad(text, "delay must be >= 0");
  double ns = v * ns_per;
  if (ns > std::chrono::duration_cast<std::chrono::nanoseconds>(kMaxStragglerDelay).count())
    bad(text, "delay over " + std::to_string(kMaxStragglerDelay.count()) + " s");
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(ns)));
}

}  // namespace

Straggler parseStraggler(std::string_view text, BareNumber bare) {
  Straggler s;
  if (text.empty() || text == "none") return s;
  auto colon = text.find(':');
  if (colon == std::string_view::npos) bad(text, "missing ':'");
  std::string_view rankText = text.substr(0, colon);
  int rank = -1;
  auto [p, ec] = std::from_chars(rankText.data(), rankText.data() + rankText.size(), rank);
  if (ec != std::errc() || p != rankText.data() + rankText.size() || rank < 0)
    bad(text, "rank '" + std::string(rankText) + "' is not a whole number >= 0");
  s.rank = rank;
  std::string_view rest = text.substr(colon + 1);
  if (rest.empty()) bad(text, "nothing after ':'");
  if (rest.find('=') == std::string_view::npos) {  // the old spelling RANK:NUMBER
    switch (bare) {
      case BareNumber::DelayMicroseconds: s.startDelay = parseDelay(text, rest); break;
      case BareNumber::ComputeFactor: s.computeFactor = parseFactor(text, rest, "compute"); break;
      case BareNumber::ComputeAndLinkFactor: s.computeFactor = s.linkFactor = parseFactor(text, rest, "slowdown"); break;
    }
    return s;
  }
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    auto eq = item.find('=');
    if (eq == std::string_view::npos) bad(text, "'" + std::string(item) + "' is not KEY=VALUE");
    std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "delay") s.startDelay = parseDelay(text, value);
    else if (key == "compute") s.computeFactor = parseFactor(text, value, "compute");
    else if (key == "link") s.linkFactor = parseFactor(text, value, "link");
    else bad(text, "unknown key '" + std::string(key) + "' (delay, compute, link)");
    if (comma != std::string_view::npos && rest.empty()) bad(text, "trailing ','");
  }
  return s;
}

std::string format(const Straggler& s) {
  if (s.rank < 0) return "none";
  std::string out = std::to_string(s.rank) + ":";
  auto num = [](double v) {
    char buf[32];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, p);
  };
  std::string parts;
  auto add = [&parts](const std::string& part) {
    if (!parts.empty()) parts.push_back(',');
    parts.append(part);
  };
  if (s.startDelay.count() > 0) {
    auto ns = s.startDelay.count();
    // The largest unit that keeps the delay a whole number: 20 s prints "20s", not "2e+07us".
    const char* unit = "ns";
    std::int64_t per = 1;
    for (auto [u, p] : {std::pair{"s", std::int64_t{1'000'000'000}}, std::pair{"ms", std::int64_t{1'000'000}},
                        std::pair{"us", std::int64_t{1'000}}})
      if (ns % p == 0) {
        unit = u;
        per = p;
        break;
      }
    add("delay=" + std::to_string(ns / per) + unit);
  }
  if (s.computeFactor != 1.0) add("compute=" + num(s.computeFactor));
  if (s.linkFactor != 1.0) add("link=" + num(s.linkFactor));
  out.append(parts.empty() ? std::string("delay=0us") : parts);
  return out;
}

}  // namespace cclab
