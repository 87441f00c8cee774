#include "collectives/core/test_data.h"

#include <algorithm>
#include <cstring>

namespace cclab {
namespace {

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::uint64_t hashOf(std::uint64_t seed, int rank, std::int64_t i) {
  return splitmix(seed * 0x100000001B3ULL ^ splitmix(static_cast<std::uint64_t>(rank) * 0x9E37ULL + 7) ^
                  splitmix(static_cast<std::uint64_t>(i)));
}

// Largest integer magnitude a type holds exactly in a sum over nranks (floats), per element.
std::int64_t sumBound(DataType t, int nranks) {
  switch (t) {
    case DataType::Float16: return std::max<std::int64_t>(1, 2048 / nranks);
    case DataType::BFloat16: return std::max<std::int64_t>(1, 256 / nranks);
    case DataType::Float32:
    case DataType::Float64: return 4096;  // quarters: 64 ranks x 1024 < 2^24
    default: return 1000000;              // int32
  }
}

constexpr int kProdActiveRanks = 12;  // ranks per element whose factor is +-2 or +-1/2

// The value as a double (floats) or as an int64 (integers, before wrapping to the type).
double valueOf(const DataSpec& s, int rank, std::int64_t i) {
  const std::uint64_t h = hashOf(s.seed, rank, i);
  const bool wraps = s.type == DataType::Int8 || s.type == DataType::UInt8;
  if (wraps) return static_cast<double>(s.type == DataType::Int8 ? static_cast<std::int8_t>(h & 0xFF) : static_cast<std::uint8_t>(h & 0xFF));
  const bool fl = isFloating(s.type);
  const double scale = (s.type == DataType::Float32 || s.type == DataType::Float64) ? 0.25 : 1.0;
  switch (s.op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
    case ReduceOp::Min:
    case ReduceOp::Max: {
      const std::int64_t b = sumBound(s.type, s.nranks);
      const auto k = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(2 * b + 1)) - b;
      return static_cast<double>(k) * scale;
    }
    case ReduceOp::Prod: {
      const double sign = (h >> 8) & 1 ? -1.0 : 1.0;
      const bool active = ((rank + i) % s.nranks) < kProdActiveRanks;
      if (!active) return sign;
      const int e = static_cast<int>((h >> 9) % 3) - 1;  // -1, 0, 1
      if (!fl) return sign * (e == 1 ? 2.0 : 1.0);
      return sign * (e == 1 ? 2.0 : e == -1 ? 0.5 : 1.0);
    }
  }
  return 0;
}

void store(DataType t, double v, void* dst, std::size_t i) {
  switch (t) {
    case DataType::Float32: static_cast<float*>(dst)[i] = static_cast<float>(v); break;
    case DataType::Float64: static_cast<double*>(dst)[i] = v; break;
    case DataType::Float16: static_cast<Half*>(dst)[i] = toHalf(static_cast<float>(v)); break;
    case DataType::BFloat16: static_cast<BFloat16*>(dst)[i] = toBFloat16(static_cast<float>(v)); break;
    case DataType::Int32: static_cast<std::int32_t*>(dst)[i] = static_cast<std::int32_t>(v); break;
    case DataType::Int8: static_cast<std::int8_t*>(dst)[i] = static_cast<std::int8_t>(static_cast<std::int64_t>(v)); break;
    case DataType::UInt8: static_cast<std::uint8_t*>(dst)[i] = static_cast<std::uint8_t>(static_cast<std::int64_t>(v)); break;
  }
}

}  // namespace

void fillInput(const DataSpec& spec, int rank, std::int64_t first, std::size_t n, void* dst) {
  for (std::size_t i = 0; i < n; ++i) store(spec.type, valueOf(spec, rank, first + static_cast<std::int64_t>(i)), dst, i);
}

void fillExpectedReduce(const DataSpec& spec, std::int64_t first, std::size_t n, void* dst) {
  const bool wraps = spec.type == DataType::Int8 || spec.type == DataType::UInt8;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t e = first + static_cast<std::int64_t>(i);
    double acc = valueOf(spec, 0, e);
    for (int r = 1; r < spec.nranks; ++r) {
      const double v = valueOf(spec, r, e);
      switch (spec.op) {
        case ReduceOp::Sum:
        case ReduceOp::Avg: acc += v; break;
        case ReduceOp::Prod: acc *= v; break;
        case ReduceOp::Min: acc = std::min(acc, v); break;
        case ReduceOp::Max: acc = std::max(acc, v); break;
      }
      if (wraps) {  // keep the integer exact in a double: wrap to the type after each step
        const auto w = static_cast<std::int64_t>(acc);
        acc = static_cast<double>(spec.type == DataType::Int8 ? static_cast<std::int8_t>(w) : static_cast<std::uint8_t>(w));
      }
    }
    store(spec.type, acc, dst, i);
  }
  if (spec.op == ReduceOp::Avg) finishAvg(dst, n, spec.type, spec.nranks);
}

std::size_t countWrong(DataType t, const void* got, const void* expected, std::size_t n) {
  const std::size_t w = sizeOf(t);
  const auto* a = static_cast<const unsigned char*>(got);
  const auto* b = static_cast<const unsigned char*>(expected);
  if (n == 0 || std::memcmp(a, b, n * w) == 0) return 0;
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::memcmp(a + i * w, b + i * w, w) == 0) continue;
    if (isFloating(t)) {  // +0 == -0
      bool bothZero = true;
      for (std::size_t k = 0; k < w; ++k) {
        const unsigned char signMask = (k == w - 1) ? 0x7F : 0xFF;
        if ((a[i * w + k] & signMask) != 0 || (b[i * w + k] & signMask) != 0) bothZero = false;
      }
      if (bothZero) continue;
    }
    ++wrong;
  }
  return wrong;
}

}  // namespace cclab
