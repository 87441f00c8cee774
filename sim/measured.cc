// Reads measured *_perf -J files (the bench JSON) into Measurements for calibrate().
#include "sim/measured.h"

#include <cmath>
#include <map>

#include "collectives/core/errors.h"
#include "sim/json_file.h"
#include "sim/replay.h"

namespace cclab::sim {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& source, const std::string& field, const std::string& what) {
  throw MeasuredError("measured file '" + source + "': field '" + field + "' " + what);
}

double number(const json& j, const std::string& source, const std::string& field) {
  if (!j.is_number()) bad(source, field, "must be a number (got " + j.dump() + ")");
  return j.get<double>();
}

// A whole number in [lo, hi]: checked before any cast (1e30 or 2^70 ranks are refused, not wrapped).
std::int64_t whole(const json& j, const std::string& source, const std::string& field, std::int64_t lo, std::int64_t hi) {
  const double v = number(j, source, field);
  if (!(v >= static_cast<double>(lo) && v <= static_cast<double>(hi)) || v != std::floor(v))
    bad(source, field, "must be a whole number in " + std::to_string(lo) + ".." + std::to_string(hi) + " (got " + j.dump() + ")");
  return static_cast<std::int64_t>(v);
}

}  // namespace

std::int64_t elemSizeOf(const std::string& type) {
  static const std::map<std::string, std::int64_t> sizes = {
      {"float", 4},  {"float32", 4}, {"double", 8}, {"float64", 8}, {"half", 2},   {"float16", 2},
      {"bfloat16", 2}, {"int8", 1},  {"uint8", 1},  {"char", 1},    {"int32", 4},  {"int", 4},
      {"uint32", 4}, {"int64", 8},   {"uint64", 8}};
  auto it = sizes.find(type);
  if (it == sizes.end()) throw InvalidArgument("unknown data type '" + type + "'");
  return it->second;
}

Measurement parseMeasurement(const json& j, const std::string& source) {
  Measurement m;
  m.source = source;
  if (!j.is_object()) throw MeasuredError("measured file '" + source + "': not a JSON object");
  m.collectiveGiven = j.contains("collective");
  try {
    m.collective = plan::parseCollective(j.value("collective", std::string("allreduce")));
  } catch (const std::exception&) {
    bad(source, "collective", "is not a known collective (got " + j.value("collective", json()).dump() + ")");
  }
  try {
    m.algorithm = plan::parseAlgorithm(j.value("algo", std::string("ring")));
  } catch (const std::exception&) {
    bad(source, "algo", "is not a known algorithm (got " + j.value("algo", json()).dump() + ")");
  }
  if (m.algorithm == plan::Algorithm::Auto)
    bad(source, "algo", "is auto: the file does not say which algorithm each size ran (measure with --algo NAME to calibrate)");
  if (!j.contains("nranks")) bad(source, "nranks", "is missing");
  m.nranks = static_cast<int>(whole(j["nranks"], source, "nranks", 1, kMaxReplayRanks));  // calibrate replays it
  m.type = j.value("type", std::string("float"));
  try {
    m.elemSize = elemSizeOf(m.type);
  } catch (const std::exception&) {
    bad(source, "type", "is not a known data type (got '" + m.type + "')");
  }
  if (!j.contains("results") || !j["results"].is_array()) bad(source, "results", "must be an array");
  const auto& results = j["results"];
  if (results.size() > kMaxMeasuredRows)
    bad(source, "results", "has " + std::to_string(results.size()) + " rows, more than a sweep has (at most " +
                               std::to_string(kMaxMeasuredRows) + ")");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const json& r = results[i];
    const std::string f = "results[" + std::to_string(i) + "]";
    if (!r.is_object()) bad(source, f, "must be an object");
    MeasuredPoint pt;
    if (!r.contains("size")) bad(source, f + ".size", "is missing");
    pt.size = whole(r["size"], source, f + ".size", 0, kMaxMeasuredBytes);
    const std::int64_t elems = pt.size / m.elemSize;  // nccl-tests' count column is size / type size
    // NCCL API count: per rank for allgather and reducescatter (the size column is the total).
    const bool perRank = m.collective == plan::Collective::AllGather || m.collective == plan::Collective::ReduceScatter;
    pt.count = perRank ? elems / m.nranks : elems;
    // A time present must be a positive number of microseconds (0 or negative is a broken row, not a missing one).
    auto timeOf = [&](const json& o, const std::string& where) -> double {
      for (const char* key : {"time_us", "time"}) {
        if (!o.contains(key)) continue;
        const double v = number(o[key], source, where + "." + key);
        if (!(v > 0)) bad(source, where + "." + key, "must be a positive time in microseconds (got " + o[key].dump() + ")");
        return v;
      }
      return -1;
    };
    double t = -1;
    if (r.contains("oop") && r["oop"].is_object()) t = timeOf(r["oop"], f + ".oop");
    if (t < 0 && r.contains("ip") && r["ip"].is_object()) t = timeOf(r["ip"], f + ".ip");
    if (t < 0) t = timeOf(r, f);
    if (t < 0) bad(source, f + ".oop.time_us", "is missing");
    if (!(t <= kMaxMeasuredMicros)) bad(source, f + ".oop.time_us", "is not a time a collective takes (over an hour)");
    pt.time = t;
    if (pt.size > 0) m.points.push_back(pt);
  }
  return m;
}

Measurement loadMeasurement(const std::string& path) {
  json j;
  try {
    j = readJsonFile(path, "measured");
  } catch (const InvalidArgument& e) {
    throw MeasuredError(e.what());
  }
  return parseMeasurement(j, path);
}

}  // namespace cclab::sim
