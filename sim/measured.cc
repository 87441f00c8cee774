#include "sim/measured.h"

#include <cmath>
#include <fstream>
#include <map>

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

// A whole number in [lo, hi], checked before the cast (a double outside the target type is undefined).
std::int64_t wholeNumber(const json& j, const std::string& source, const std::string& field, double lo, double hi) {
  const double x = number(j, source, field);
  if (!(x >= lo && x <= hi) || x != std::floor(x)) bad(source, field, "must be a whole number in range (got " + j.dump() + ")");
  return static_cast<std::int64_t>(x);
}

constexpr double kMaxRanks = 1 << 20;        // as topology files (kMaxRanks in sim/topology.cc)
constexpr double kMaxBytes = 0x1p62;         // far above any buffer, far below int64 overflow

}  // namespace

std::int64_t elemSizeOf(const std::string& type) {
  static const std::map<std::string, std::int64_t> sizes = {
      {"float", 4},  {"float32", 4}, {"double", 8}, {"float64", 8}, {"half", 2},   {"float16", 2},
      {"bfloat16", 2}, {"int8", 1},  {"uint8", 1},  {"char", 1},    {"int32", 4},  {"int", 4},
      {"uint32", 4}, {"int64", 8},   {"uint64", 8}};
  auto it = sizes.find(type);
  if (it == sizes.end()) throw std::invalid_argument("unknown data type '" + type + "'");
  return it->second;
}

Measurement parseMeasurement(const json& j, const std::string& source) {
  Measurement m;
  m.source = source;
  if (!j.is_object()) throw MeasuredError("measured file '" + source + "': not a JSON object");
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
  if (!j.contains("nranks")) bad(source, "nranks", "is missing");
  m.nranks = static_cast<int>(wholeNumber(j["nranks"], source, "nranks", 1, kMaxRanks));
  m.type = j.value("type", std::string("float"));
  try {
    m.elemSize = elemSizeOf(m.type);
  } catch (const std::exception&) {
    bad(source, "type", "is not a known data type (got '" + m.type + "')");
  }
  if (!j.contains("results") || !j["results"].is_array()) bad(source, "results", "must be an array");
  const auto& results = j["results"];
  for (std::size_t i = 0; i < results.size(); ++i) {
    const json& r = results[i];
    const std::string f = "results[" + std::to_string(i) + "]";
    if (!r.is_object()) bad(source, f, "must be an object");
    MeasuredPoint pt;
    if (!r.contains("size")) bad(source, f + ".size", "is missing");
    pt.size = wholeNumber(r["size"], source, f + ".size", 0, kMaxBytes);
    const std::int64_t elems = pt.size / m.elemSize;  // nccl-tests' count column is size / type size
    // NCCL API count: per rank for allgather and reducescatter (the size column is the total).
    const bool perRank = m.collective == plan::Collective::AllGather || m.collective == plan::Collective::ReduceScatter;
    pt.count = perRank ? elems / m.nranks : elems;
    auto timeOf = [&](const json& o, const std::string& where) -> double {
      if (o.contains("time_us")) return number(o["time_us"], source, where + ".time_us");
      if (o.contains("time")) return number(o["time"], source, where + ".time");
      return -1;
    };
    double t = -1;
    if (r.contains("oop") && r["oop"].is_object()) t = timeOf(r["oop"], f + ".oop");
    if (t < 0 && r.contains("ip") && r["ip"].is_object()) t = timeOf(r["ip"], f + ".ip");
    if (t < 0) t = timeOf(r, f);
    if (t < 0) bad(source, f + ".oop.time_us", "is missing");
    pt.time = t;
    if (pt.size > 0 && pt.time > 0) m.points.push_back(pt);
  }
  return m;
}

Measurement loadMeasurement(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw MeasuredError("cannot open measured file '" + path + "'");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    throw MeasuredError("measured file '" + path + "': not valid JSON: " + e.what());
  }
  return parseMeasurement(j, path);
}

}  // namespace cclab::sim
