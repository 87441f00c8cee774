// Reader for the JSON that bench/*_perf -J writes (nccl-tests' columns as JSON):
//   {"collective":"allreduce","backend":"host","algo":"ring","nranks":4,"type":"float","op":"sum",
//    "results":[{"size":B,"count":n,"type":"float","redop":"sum","root":-1,
//                "oop":{"time_us":t,"algbw":..,"busbw":..,"wrong":0},"ip":{...}}, ...]}
// Tolerant: unknown fields are ignored, "time" is accepted for "time_us", a result with neither
// "oop" nor "ip" may carry "time_us" itself, and the element type defaults to float. cclab-sim's own
// output (the same shape, "predicted": true) reads back the same way.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/plan/plan.h"
#include "collectives/core/errors.h"
#include "sim/units.h"

namespace cclab::sim {

class MeasuredError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

struct MeasuredPoint {
  Bytes size = 0;           // the "size" column (bytes)
  std::int64_t count = 0;   // the NCCL API count (plan::Plan::count)
  Micros time = 0;          // out-of-place time if present, else in-place
};

struct Measurement {
  std::string source;
  plan::Collective collective = plan::Collective::AllReduce;
  bool collectiveGiven = true;  // false: the file had no "collective" (read as allreduce; calibrate refuses it)
  plan::Algorithm algorithm = plan::Algorithm::Ring;
  int nranks = 0;
  std::string type = "float";
  std::int64_t elemSize = 4;
  std::vector<MeasuredPoint> points;
};

// Limits on what a measured file may say (each refused with the field named, before any work):
// nranks up to kMaxReplayRanks (replay.h: calibrate replays every file), at most 4096 result rows (a
// sweep of every power of two from 1 B to 16 GiB has 35), sizes up to 1 PiB, times up to an hour.
inline constexpr std::size_t kMaxMeasuredRows = 4096;
inline constexpr Bytes kMaxMeasuredBytes = Bytes{1} << 50;
inline constexpr Micros kMaxMeasuredMicros = 3600e6;

// Bytes per element of a type name (nccl-tests' names: float, double, half, bfloat16, int32, ...).
std::int64_t elemSizeOf(const std::string& type);

Measurement parseMeasurement(const nlohmann::json& j, const std::string& source);
Measurement loadMeasurement(const std::string& path);

}  // namespace cclab::sim
