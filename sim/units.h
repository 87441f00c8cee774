// Units used throughout the simulator. Everything is a plain double or int64 with its unit in the name
// of the type alias, so a formula reads like its paper: time in microseconds, sizes in bytes,
// bandwidth in GB/s (1e9 bytes per second), inverse bandwidth β in µs per byte.
#pragma once

#include <cstdint>

namespace cclab::sim {

using Micros = double;        // a time or duration, µs
using Bytes = std::int64_t;   // a size, bytes
using GBps = double;          // a bandwidth, 1e9 bytes per second
using MicrosPerByte = double; // an inverse bandwidth (β, γ, δ), µs per byte

// 1 GB/s = 1e9 B/s = 1e3 B/µs, so β = 1 / (B * 1e3) µs per byte.
inline constexpr double kBytesPerMicroPerGBps = 1e3;

inline MicrosPerByte inverseBandwidth(GBps bandwidth) {
  return bandwidth > 0 ? 1.0 / (bandwidth * kBytesPerMicroPerGBps) : 0.0;
}
inline GBps bandwidthOf(MicrosPerByte beta) { return beta > 0 ? 1.0 / (beta * kBytesPerMicroPerGBps) : 0.0; }

// algbw in GB/s from a size in bytes and a time in µs (nccl-tests: size / time / 1e9 with time in s).
inline GBps algBandwidth(Bytes bytes, Micros time) {
  return time > 0 ? static_cast<double>(bytes) / (time * kBytesPerMicroPerGBps) : 0.0;
}

}  // namespace cclab::sim
