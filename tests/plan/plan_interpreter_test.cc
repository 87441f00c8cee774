// The interpreter on real data: every generator x types x ops against the exact reference of
// collectives/core/test_data, with random (hashed) inputs and non-power-of-two sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "collectives/core/test_data.h"
#include "collectives/plan/interpret.h"
#include "tests/plan/generator_cases.h"

namespace cclab::plan {
namespace {

using Case = testing::GeneratorCase;

// Runs `plan` on bytes of type t: the combine step reduces one element through hostReduceFn.
template <std::size_t W>
struct Elem {
  std::array<unsigned char, W> b;
};

template <std::size_t W>
void runTyped(const Plan& plan, DataType t, ReduceOp op, std::vector<std::vector<unsigned char>>& in,
              std::vector<std::vector<unsigned char>>& out, std::int64_t slice) {
  const ReduceFn fn = hostReduceFn(t, op);
  std::vector<std::vector<unsigned char>> scratch(plan.nranks);
  std::vector<RankBuffers<Elem<W>>> bufs(plan.nranks);
  for (int r = 0; r < plan.nranks; ++r) {
    scratch[r].resize(static_cast<std::size_t>(plan.scratchCount) * W);
    bufs[r] = {reinterpret_cast<Elem<W>*>(in[r].data()), reinterpret_cast<Elem<W>*>(out[r].data()),
               reinterpret_cast<Elem<W>*>(scratch[r].data())};
  }
  interpret<Elem<W>>(plan, bufs, [fn](const Elem<W>& a, const Elem<W>& b) {
    Elem<W> r;
    fn(&r, &a, &b, 1);
    return r;
  }, InterpretOptions{slice, 2});
}

void runPlan(const Plan& plan, DataType t, ReduceOp op, std::vector<std::vector<unsigned char>>& in,
             std::vector<std::vector<unsigned char>>& out, std::int64_t slice) {
  switch (sizeOf(t)) {
    case 1: runTyped<1>(plan, t, op, in, out, slice); break;
    case 2: runTyped<2>(plan, t, op, in, out, slice); break;
    case 4: runTyped<4>(plan, t, op, in, out, slice); break;
    default: runTyped<8>(plan, t, op, in, out, slice); break;
  }
  if (op == ReduceOp::Avg && reduces(plan.collective))
    for (int r = 0; r < plan.nranks; ++r)
      if (!isRooted(plan.collective) || r == plan.root)
        finishAvg(out[r].data(), out[r].size() / sizeOf(t), t, plan.nranks);
}

// Expected output of rank r.
std::vector<unsigned char> expected(const Plan& plan, const DataSpec& spec, int r) {
  const std::size_t w = sizeOf(spec.type);
  const BufferCounts c = bufferCounts(plan.collective, plan.nranks, plan.count);
  std::vector<unsigned char> e(static_cast<std::size_t>(c.output) * w);
  const auto n = static_cast<std::size_t>(plan.count);
  switch (plan.collective) {
    case Collective::AllReduce:
    case Collective::Reduce: fillExpectedReduce(spec, 0, n, e.data()); break;
    case Collective::ReduceScatter: fillExpectedReduce(spec, r * plan.count, n, e.data()); break;
    case Collective::AllGather:
      for (int q = 0; q < plan.nranks; ++q) fillInput(spec, q, 0, n, e.data() + q * n * w);
      break;
    case Collective::Broadcast: fillInput(spec, plan.root, 0, n, e.data()); break;
  }
  return e;
}

void check(const Case& c, int p, std::int64_t n, DataType t, ReduceOp op, std::int64_t slice) {
  const int root = p / 2;
  const Plan plan = makePlan(c.collective, c.algorithm, p, n, root);
  const DataSpec spec{t, op, p, 1234 + static_cast<std::uint64_t>(p)};
  const BufferCounts counts = bufferCounts(c.collective, p, n);
  const std::size_t w = sizeOf(t);
  std::vector<std::vector<unsigned char>> in(p), out(p);
  for (int r = 0; r < p; ++r) {
    in[r].resize(static_cast<std::size_t>(counts.input) * w);
    fillInput(spec, r, 0, static_cast<std::size_t>(counts.input), in[r].data());
    out[r].assign(static_cast<std::size_t>(counts.output) * w, 0xAB);
  }
  runPlan(plan, t, op, in, out, slice);
  for (int r = 0; r < p; ++r) {
    if (c.collective == Collective::Reduce && r != root) continue;
    const auto want = expected(plan, spec, r);
    ASSERT_EQ(countWrong(t, out[r].data(), want.data(), want.size() / w), 0U)
        << name(c.collective) << "/" << name(c.algorithm) << " p=" << p << " n=" << n << " type=" << name(t)
        << " op=" << name(op) << " rank=" << r << " slice=" << slice;
  }
}

class InterpreterTest : public ::testing::TestWithParam<Case> {};

TEST_P(InterpreterTest, EveryTypeOpRankCountAndAwkwardCount) {
  const Case c = GetParam();
  const bool reducing = reduces(c.collective);
  constexpr std::int64_t kPrime = 1031;
  for (int p = 1; p <= 16; ++p)
    for (std::int64_t n : std::set<std::int64_t>{0, 1, p - 1, p + 1, kPrime})
      for (DataType t : kAllDataTypes)
        for (ReduceOp op : kAllReduceOps) {
          if (!reducing && op != ReduceOp::Sum) continue;
          check(c, p, n, t, op, n == kPrime ? 100 : 0);
        }
}

INSTANTIATE_TEST_SUITE_P(All, InterpreterTest, ::testing::ValuesIn(testing::kGeneratorCases),
                         [](const auto& info) { return testing::caseName(info.param); });

TEST(TestData, ReferenceDetectsASingleWrongElement) {
  const DataSpec spec{DataType::Float32, ReduceOp::Sum, 4, 7};
  std::vector<float> want(100), got(100);
  fillExpectedReduce(spec, 0, 100, want.data());
  got = want;
  EXPECT_EQ(countWrong(DataType::Float32, got.data(), want.data(), 100), 0U);
  got[37] = std::nextafter(got[37], 1e9F);
  EXPECT_EQ(countWrong(DataType::Float32, got.data(), want.data(), 100), 1U);
}

TEST(TestData, InputsAreNotConstant) {
  for (DataType t : kAllDataTypes) {
    const DataSpec spec{t, ReduceOp::Sum, 8, 3};
    std::vector<unsigned char> a(64 * sizeOf(t));
    fillInput(spec, 1, 0, 64, a.data());
    std::set<std::vector<unsigned char>> distinct;
    for (std::size_t i = 0; i < 64; ++i)
      distinct.insert({a.begin() + i * sizeOf(t), a.begin() + (i + 1) * sizeOf(t)});
    EXPECT_GT(distinct.size(), 8U) << name(t);
  }
}

TEST(HalfPrecision, RoundTripsAndRoundsToNearestEven) {
  for (float f : {0.0F, 1.0F, -2.5F, 65504.0F, 6.103515625e-05F, 5.960464477539063e-08F, 1024.5F})
    EXPECT_EQ(toFloat(toHalf(f)), f == 1024.5F ? 1024.0F : f) << f;
  EXPECT_EQ(toFloat(toHalf(2049.0F)), 2048.0F);  // tie to even
  EXPECT_EQ(toFloat(toHalf(2051.0F)), 2052.0F);
  EXPECT_TRUE(std::isinf(toFloat(toHalf(70000.0F))));
  EXPECT_EQ(toFloat(toBFloat16(1.0F + 1.0F / 256)), 1.0F);  // tie to even
  EXPECT_EQ(toFloat(toBFloat16(257.0F)), 256.0F);
}

}  // namespace
}  // namespace cclab::plan
