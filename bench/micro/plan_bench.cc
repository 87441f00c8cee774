// Micro-benchmarks: plan generation (makePlan) for p = 8..1024 ranks per allreduce algorithm, and
// the single-thread plan interpreter (plan/interpret.h) running a ring and an rhd allreduce on host
// memory. Generation cost grows with ranks x steps, never with bytes: count stays at 1 Mi elements.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <span>
#include <vector>

#include "collectives/plan/interpret.h"
#include "collectives/plan/plan.h"

namespace {

using cclab::plan::Algorithm;
using cclab::plan::Collective;

constexpr std::int64_t kGenerateCount = 1 << 20;

void generate(benchmark::State& state, Algorithm algorithm) {
  const int p = static_cast<int>(state.range(0));
  std::size_t ops = 0;
  for (auto _ : state) {
    const auto plan = cclab::plan::makePlan(Collective::AllReduce, algorithm, p, kGenerateCount);
    ops = plan.opCount();
    benchmark::DoNotOptimize(ops);
  }
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["ops/s"] = benchmark::Counter(static_cast<double>(ops) * static_cast<double>(state.iterations()),
                                               benchmark::Counter::kIsRate);
}

void interpretAllReduce(benchmark::State& state, Algorithm algorithm) {
  const int p = static_cast<int>(state.range(0));
  const std::int64_t count = state.range(1);
  const auto plan = cclab::plan::makePlan(Collective::AllReduce, algorithm, p, count);
  const auto counts = cclab::plan::bufferCounts(Collective::AllReduce, p, count);
  std::vector<std::vector<float>> in(p, std::vector<float>(static_cast<std::size_t>(counts.input), 1.0F));
  std::vector<std::vector<float>> out(p, std::vector<float>(static_cast<std::size_t>(counts.output)));
  std::vector<std::vector<float>> scratch(p, std::vector<float>(static_cast<std::size_t>(plan.scratchCount)));
  std::vector<cclab::plan::RankBuffers<float>> bufs(p);
  for (int r = 0; r < p; ++r) bufs[r] = {in[r].data(), out[r].data(), scratch[r].data()};
  for (auto _ : state) {
    cclab::plan::interpret<float>(plan, std::span<const cclab::plan::RankBuffers<float>>(bufs),
                                  [](float a, float b) { return a + b; });
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * count * static_cast<std::int64_t>(sizeof(float)));
}

void rankCounts(benchmark::internal::Benchmark* b) {
  for (int p : {8, 64, 256, 1024}) b->Arg(p);
}

}  // namespace

BENCHMARK_CAPTURE(generate, ring, Algorithm::Ring)->Apply(rankCounts)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(generate, tree, Algorithm::Tree)->Apply(rankCounts)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(generate, dbtree, Algorithm::DoubleBinaryTree)->Apply(rankCounts)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(generate, rhd, Algorithm::HalvingDoubling)->Apply(rankCounts)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(generate, rd, Algorithm::RecursiveDoubling)->Apply(rankCounts)->Unit(benchmark::kMicrosecond);

BENCHMARK_CAPTURE(interpretAllReduce, ring, Algorithm::Ring)->Args({8, 1 << 16})->Args({8, 1 << 20})->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(interpretAllReduce, rhd, Algorithm::HalvingDoubling)->Args({8, 1 << 16})->Args({8, 1 << 20})->Unit(benchmark::kMicrosecond);
