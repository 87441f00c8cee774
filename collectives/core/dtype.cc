#include "collectives/core/dtype.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "collectives/core/errors.h"

namespace cclab {

std::size_t sizeOf(DataType t) {
  switch (t) {
    case DataType::Float64: return 8;
    case DataType::Float32:
    case DataType::Int32: return 4;
    case DataType::Float16:
    case DataType::BFloat16: return 2;
    case DataType::Int8:
    case DataType::UInt8: return 1;
  }
  return 1;
}

std::string_view name(DataType t) {
  switch (t) {
    case DataType::Float32: return "float";
    case DataType::Float64: return "double";
    case DataType::Float16: return "half";
    case DataType::BFloat16: return "bfloat16";
    case DataType::Int32: return "int32";
    case DataType::Int8: return "int8";
    case DataType::UInt8: return "uint8";
  }
  return "?";
}

std::string_view name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Min: return "min";
    case ReduceOp::Max: return "max";
    case ReduceOp::Avg: return "avg";
  }
  return "?";
}

DataType parseDataType(std::string_view s) {
  for (DataType t : kAllDataTypes)
    if (s == name(t)) return t;
  if (s == "float32") return DataType::Float32;
  if (s == "float64") return DataType::Float64;
  if (s == "float16" || s == "fp16") return DataType::Float16;
  if (s == "bf16") return DataType::BFloat16;
  if (s == "int") return DataType::Int32;
  throw InvalidArgument("unknown data type '" + std::string(s) + "' (float, double, half, bfloat16, int32, int8, uint8)");
}

ReduceOp parseReduceOp(std::string_view s) {
  for (ReduceOp op : kAllReduceOps)
    if (s == name(op)) return op;
  throw InvalidArgument("unknown reduce op '" + std::string(s) + "' (sum, prod, min, max, avg)");
}

bool isFloating(DataType t) {
  return t == DataType::Float32 || t == DataType::Float64 || t == DataType::Float16 || t == DataType::BFloat16;
}

float toFloat(Half h) {
  const std::uint32_t sign = (h.bits & 0x8000U) << 16;
  std::uint32_t exp = (h.bits >> 10) & 0x1FU;
  std::uint32_t man = h.bits & 0x3FFU;
  std::uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000U | (man << 13);  // inf, nan
  } else if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while ((man & 0x400U) == 0);
      bits = sign | static_cast<std::uint32_t>(127 - 15 - e) << 23 | (man & 0x3FFU) << 13;
    }
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  return std::bit_cast<float>(bits);
}

Half toHalf(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000U);
  const std::uint32_t absx = x & 0x7FFFFFFFU;
  if (absx >= 0x7F800000U) return {static_cast<std::uint16_t>(sign | 0x7C00U | (absx > 0x7F800000U ? 0x200U : 0U))};
  if (absx >= 0x477FF000U) return {static_cast<std::uint16_t>(sign | 0x7C00U)};  // rounds to >= 65520: inf
  if (absx < 0x38800000U) {  // below the smallest normal half: subnormal or zero
    const float scaled = std::bit_cast<float>(absx) * 16777216.0F;  // exact: times 2^24
    const auto m = static_cast<std::uint32_t>(std::nearbyint(scaled));  // round to nearest even
    return {static_cast<std::uint16_t>(sign | m)};
  }
  const std::uint32_t lsb = (absx >> 13) & 1U;
  const std::uint32_t rounded = absx + 0xFFFU + lsb;
  return {static_cast<std::uint16_t>(sign | (((rounded >> 13) - ((127 - 15) << 10)) & 0x7FFFU))};
}

float toFloat(BFloat16 b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b.bits) << 16); }

BFloat16 toBFloat16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7FFFFFFFU) > 0x7F800000U) return {static_cast<std::uint16_t>((x >> 16) | 0x40U)};  // quiet nan
  const std::uint32_t lsb = (x >> 16) & 1U;
  return {static_cast<std::uint16_t>((x + 0x7FFFU + lsb) >> 16)};
}

namespace {

struct SumOp {
  template <class T>
  static T apply(T a, T b) {
    return static_cast<T>(a + b);
  }
};
struct ProdOp {
  template <class T>
  static T apply(T a, T b) {
    return static_cast<T>(a * b);
  }
};
struct MinOp {
  template <class T>
  static T apply(T a, T b) {
    return b < a ? b : a;
  }
};
struct MaxOp {
  template <class T>
  static T apply(T a, T b) {
    return a < b ? b : a;
  }
};

template <class T, class Op>
void reduceNative(void* dst, const void* a, const void* b, std::size_t n) {
  auto* d = static_cast<T*>(dst);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i) d[i] = Op::apply(x[i], y[i]);
}

// Half and bfloat16: each op computed in float and rounded once, as one half-precision instruction.
template <class T, class Op>
void reduceNarrow(void* dst, const void* a, const void* b, std::size_t n) {
  auto* d = static_cast<T*>(dst);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i) {
    const float r = Op::apply(toFloat(x[i]), toFloat(y[i]));
    if constexpr (std::is_same_v<T, Half>)
      d[i] = toHalf(r);
    else
      d[i] = toBFloat16(r);
  }
}

template <class Op>
ReduceFn pick(DataType t) {
  switch (t) {
    case DataType::Float32: return reduceNative<float, Op>;
    case DataType::Float64: return reduceNative<double, Op>;
    case DataType::Int32: return reduceNative<std::int32_t, Op>;
    case DataType::Int8: return reduceNative<std::int8_t, Op>;
    case DataType::UInt8: return reduceNative<std::uint8_t, Op>;
    case DataType::Float16: return reduceNarrow<Half, Op>;
    case DataType::BFloat16: return reduceNarrow<BFloat16, Op>;
  }
  return nullptr;
}

template <class T>
void divideInt(void* data, std::size_t n, int nranks) {
  auto* d = static_cast<T*>(data);
  for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<T>(d[i] / nranks);
}

}  // namespace

ReduceFn hostReduceFn(DataType t, ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return pick<SumOp>(t);
    case ReduceOp::Prod: return pick<ProdOp>(t);
    case ReduceOp::Min: return pick<MinOp>(t);
    case ReduceOp::Max: return pick<MaxOp>(t);
  }
  return nullptr;
}

void finishAvg(void* data, std::size_t n, DataType t, int nranks) {
  switch (t) {
    case DataType::Float32: {
      auto* d = static_cast<float*>(data);
      for (std::size_t i = 0; i < n; ++i) d[i] = d[i] / static_cast<float>(nranks);
      break;
    }
    case DataType::Float64: {
      auto* d = static_cast<double*>(data);
      for (std::size_t i = 0; i < n; ++i) d[i] = d[i] / nranks;
      break;
    }
    case DataType::Float16: {
      auto* d = static_cast<Half*>(data);
      for (std::size_t i = 0; i < n; ++i) d[i] = toHalf(toFloat(d[i]) / static_cast<float>(nranks));
      break;
    }
    case DataType::BFloat16: {
      auto* d = static_cast<BFloat16*>(data);
      for (std::size_t i = 0; i < n; ++i) d[i] = toBFloat16(toFloat(d[i]) / static_cast<float>(nranks));
      break;
    }
    case DataType::Int32: divideInt<std::int32_t>(data, n, nranks); break;
    case DataType::Int8: divideInt<std::int8_t>(data, n, nranks); break;
    case DataType::UInt8: divideInt<std::uint8_t>(data, n, nranks); break;
  }
}

}  // namespace cclab
