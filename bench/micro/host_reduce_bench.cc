// Micro-benchmark: the host reduce kernels (collectives/core hostReduceFn), sum per data type, on
// 1 MiB of input (cache-resident on most CPUs) and 64 MiB (memory-bound). Reports bytes of the
// result written per second (dst = a + b reads 2 bytes per byte written). Inputs are the exact test
// data of the benchmarks (test_data.h: normal numbers, as in a real run; constant bytes would make
// half-precision inputs subnormal and measure its slow path).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "collectives/core/dtype.h"
#include "collectives/core/test_data.h"

namespace {

using cclab::DataType;

void reduceSum(benchmark::State& state, DataType type) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t n = bytes / cclab::sizeOf(type);
  std::vector<std::uint8_t> a(bytes), b(bytes), dst(bytes);
  const cclab::DataSpec spec{.type = type, .op = cclab::ReduceOp::Sum, .nranks = 2};
  cclab::fillInput(spec, 0, 0, n, a.data());
  cclab::fillInput(spec, 1, 0, n, b.data());
  const cclab::ReduceFn fn = cclab::hostReduceFn(type, cclab::ReduceOp::Sum);
  for (auto _ : state) {
    fn(dst.data(), a.data(), b.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  state.SetLabel(std::string(cclab::name(type)));
}

constexpr std::int64_t kCacheBytes = 1 << 20;
constexpr std::int64_t kMemoryBytes = 64 << 20;

}  // namespace

BENCHMARK_CAPTURE(reduceSum, float, DataType::Float32)->Arg(kCacheBytes)->Arg(kMemoryBytes);
BENCHMARK_CAPTURE(reduceSum, double, DataType::Float64)->Arg(kCacheBytes)->Arg(kMemoryBytes);
BENCHMARK_CAPTURE(reduceSum, half, DataType::Float16)->Arg(kCacheBytes)->Arg(kMemoryBytes);
BENCHMARK_CAPTURE(reduceSum, bfloat16, DataType::BFloat16)->Arg(kCacheBytes)->Arg(kMemoryBytes);
