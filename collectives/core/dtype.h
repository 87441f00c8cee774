// Data types and reduction operators, and the host's element-wise reduce kernels.
// Shared by the host executor, the CUDA executor's host side, the benchmarks and the trainer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace cclab {

enum class DataType : std::uint8_t { Float32, Float64, Float16, BFloat16, Int32, Int8, UInt8 };
enum class ReduceOp : std::uint8_t { Sum, Prod, Min, Max, Avg };

inline constexpr DataType kAllDataTypes[] = {DataType::Float32, DataType::Float64, DataType::Float16, DataType::BFloat16,
                                             DataType::Int32,   DataType::Int8,    DataType::UInt8};
inline constexpr ReduceOp kAllReduceOps[] = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg};

std::size_t sizeOf(DataType t);
// nccl-tests' names: float, double, half, bfloat16, int32, int8, uint8; sum, prod, min, max, avg.
std::string_view name(DataType t);
std::string_view name(ReduceOp op);
// Accepts the names above (and aliases float32/float64/float16/fp16/bf16/int); throws InvalidArgument.
DataType parseDataType(std::string_view s);
ReduceOp parseReduceOp(std::string_view s);
bool isFloating(DataType t);

// IEEE binary16 and bfloat16 as storage types, converted through float (round to nearest even).
struct Half {
  std::uint16_t bits = 0;
};
struct BFloat16 {
  std::uint16_t bits = 0;
};
float toFloat(Half h);
float toFloat(BFloat16 b);
Half toHalf(float f);
BFloat16 toBFloat16(float f);

// dst[i] = a[i] (op) b[i] for n elements; dst may alias a or b. Avg reduces as Sum (see finishAvg).
using ReduceFn = void (*)(void* dst, const void* a, const void* b, std::size_t n);
ReduceFn hostReduceFn(DataType t, ReduceOp op);

// Avg's last step: data[i] = data[i] / nranks, computed in float (double for float64) and rounded
// back; integer types divide with truncation, as NCCL does.
void finishAvg(void* data, std::size_t n, DataType t, int nranks);

}  // namespace cclab
