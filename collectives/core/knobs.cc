// The knob table's parsers and listings (knobs.h).
#include "collectives/core/knobs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::knobs {
namespace {

// Each Id names its row: the table is in Id order.
constexpr bool rowsMatchIds() {
  constexpr std::array<std::pair<Id, std::string_view>, 12> ids{{
      {Id::RanksPerNode, "CCLAB_RANKS_PER_NODE"},
      {Id::SpinUs, "CCLAB_SPIN_US"},
      {Id::LlMaxBytes, "CCLAB_LL_MAX_BYTES"},
      {Id::LlShares, "CCLAB_LL_SHARES"},
      {Id::LlGather, "CCLAB_LL_GATHER"},
      {Id::BindRanks, "CCLAB_BIND_RANKS"},
      {Id::ProcShmBytes, "CCLAB_PROC_SHM_BYTES"},
      {Id::ProcTransport, "CCLAB_PROC_TRANSPORT"},
      {Id::CudaProcStandIn, "CCLAB_CUDA_PROC_STANDIN"},
      {Id::NcclLibrary, "CCLAB_NCCL_LIBRARY"},
      {Id::CublasLibrary, "CCLAB_CUBLAS_LIBRARY"},
      {Id::ExpectGpu, "CCLAB_EXPECT_GPU"},
  }};
  if (ids.size() != kTable.size()) return false;
  for (const auto& [id, name] : ids)
    if (knob(id).name != name) return false;
  return true;
}
static_assert(rowsMatchIds(), "knobs::kTable must list one row per Id, in Id order");

// "8K", "1G", "1T" for whole multiples of 1024, else the number.
std::string bytesText(std::int64_t v) {
  static constexpr std::string_view kUnits = "KMGT";
  std::size_t unit = 0;
  std::string suffix;
  while (v != 0 && v % 1024 == 0 && unit < kUnits.size()) {
    v /= 1024;
    suffix = std::string(1, kUnits[unit++]);
  }
  return std::to_string(v) + suffix;
}

// "shm, mpi" for "shm|mpi" (a '|' would split a Markdown cell).
std::string choicesText(std::string_view choices) {
  std::string out;
  for (const char c : choices) out += c == '|' ? std::string(", ") : std::string(1, c);
  return out;
}

bool isChoice(std::string_view choices, std::string_view value) {
  while (!choices.empty()) {
    const std::size_t bar = choices.find('|');
    if (choices.substr(0, bar) == value) return true;
    if (bar == std::string_view::npos) break;
    choices.remove_prefix(bar + 1);
  }
  return false;
}

[[noreturn]] void refuse(const Knob& k, std::string_view value, const std::string& expected) {
  throw InvalidArgument(std::string(k.name) + "='" + std::string(value) + "': expected " + expected);
}

std::string expectation(const Knob& k) {
  switch (k.type) {
    case Type::Switch: return "0 or 1";
    case Type::Integer: return "a whole number in [" + std::to_string(k.min) + ", " + std::to_string(k.max) + "]";
    case Type::Bytes:
      return "whole bytes in [" + bytesText(k.min) + ", " + bytesText(k.max) + "] (suffix K, M, G or T: 1K = 1024)";
    case Type::Choice: return "one of " + choicesText(k.choices);
    case Type::Path: return "a path";
  }
  return {};
}

// Digits, then for Bytes an optional K/M/G/T (any case) and an optional B or iB after it.
std::optional<std::int64_t> parseNumber(std::string_view text, bool withUnit) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  std::string_view rest(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (!withUnit) return rest.empty() && v <= INT64_MAX ? std::optional<std::int64_t>(static_cast<std::int64_t>(v)) : std::nullopt;
  int shift = 0;
  if (!rest.empty()) {
    const std::string_view units = "KMGT";
    const std::size_t u = units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(rest.front()))));
    if (u != std::string_view::npos) {
      shift = 10 * static_cast<int>(u + 1);
      rest.remove_prefix(1);
      if (rest == "iB" || rest == "ib") rest = {};
    }
    if (rest == "B" || rest == "b") rest = {};
  }
  if (!rest.empty() || v > (std::uint64_t{1} << 62) >> shift) return std::nullopt;
  return static_cast<std::int64_t>(v << shift);
}

const char* rawValue(const Knob& k) { return std::getenv(std::string(k.name).c_str()); }

const Knob& ofType(Id id, std::initializer_list<Type> types) {
  const Knob& k = knob(id);
  if (std::find(types.begin(), types.end(), k.type) == types.end())
    throw InvalidArgument(std::string(k.name) + " is not read that way (a knobs.h type mismatch)");
  return k;
}

}  // namespace

std::int64_t parse(const Knob& k, std::string_view value) {
  switch (k.type) {
    case Type::Switch:
      if (value == "0" || value == "1") return value == "1";
      break;
    case Type::Integer:
    case Type::Bytes:
      if (auto v = parseNumber(value, k.type == Type::Bytes); v && *v >= k.min && *v <= k.max) return *v;
      break;
    case Type::Choice:
      if (isChoice(k.choices, value)) return 0;
      break;
    case Type::Path: return 0;
  }
  refuse(k, value, expectation(k));
}

std::optional<std::int64_t> integer(Id id) {
  const Knob& k = ofType(id, {Type::Integer, Type::Bytes});
  const char* v = rawValue(k);
  if (v == nullptr) return std::nullopt;
  return parse(k, v);
}

std::optional<bool> flag(Id id) {
  const Knob& k = ofType(id, {Type::Switch});
  const char* v = rawValue(k);
  if (v == nullptr) return std::nullopt;
  return parse(k, v) == 1;
}

std::optional<std::string> text(Id id) {
  const Knob& k = ofType(id, {Type::Choice, Type::Path});
  const char* v = rawValue(k);
  if (v == nullptr || (k.type == Type::Path && *v == '\0')) return std::nullopt;
  parse(k, v);
  return std::string(v);
}

void checkAll() {
  for (const Knob& k : kTable)
    if (const char* v = rawValue(k)) parse(k, v);
}

std::string rangeText(const Knob& k) {
  switch (k.type) {
    case Type::Switch: return "0, 1";
    case Type::Integer: return std::to_string(k.min) + ".." + std::to_string(k.max);
    case Type::Bytes: return "bytes " + bytesText(k.min) + ".." + bytesText(k.max);
    case Type::Choice: return choicesText(k.choices);
    case Type::Path: return "path";
  }
  return {};
}

std::string helpText() {
  std::size_t nameWidth = 0, rangeWidth = 0;
  for (const Knob& k : kTable) {
    nameWidth = std::max(nameWidth, k.name.size());
    rangeWidth = std::max(rangeWidth, rangeText(k).size());
  }
  std::string out = "environment knobs (docs/knobs.md); a bad value is refused at start:\n";
  for (const Knob& k : kTable) {
    std::string line = "  " + std::string(k.name);
    line.resize(2 + nameWidth + 2, ' ');
    line += rangeText(k);
    line.resize(2 + nameWidth + 2 + rangeWidth + 2, ' ');
    out += line + std::string(k.meaning) + " (default " + std::string(k.defaultValue) + ")\n";
  }
  return out;
}

std::string markdownTable() {
  std::string out = "| knob | values | default | meaning |\n|---|---|---|---|\n";
  for (const Knob& k : kTable)
    out += "| `" + std::string(k.name) + "` | " + rangeText(k) + " | " + std::string(k.defaultValue) + " | " +
           std::string(k.meaning) + " |\n";
  return out;
}

}  // namespace cclab::knobs
