// The host's LL path (collectives/host/ll_*.h): the line format and its flag wrap, oneshot/twoshot
// against a double-precision reference on random data (every type and op, bit-identical on every
// rank), every other algorithm and collective against the exact reference, calls above the LL
// capacity sent back to the slot executor, and a rank that never arrives named after the timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/call/auto_rule.h"
#include "collectives/core/test_data.h"
#include "collectives/host/ll_lines.h"
#include "collectives/host/ll_path.h"

namespace cclab::host {
namespace {

using plan::Algorithm;
using plan::Collective;

std::chrono::nanoseconds spinFor(int nranks) {
  return static_cast<unsigned>(nranks) <= std::thread::hardware_concurrency() ? std::chrono::microseconds(50)
                                                                             : std::chrono::nanoseconds(0);
}

// ---- the line format ----

TEST(LlLines, AMessageRoundTripsWithItsPartialLastUnit) {
  LlConnection c(4, kLlMaxFlagPeriod);
  const std::vector<std::uint8_t> msg = {1, 2, 3, 4, 5, 6, 7};  // one full unit and a partial one
  ASSERT_TRUE(c.hasRoom(msg.size()));
  std::uint32_t d = 0;
  EXPECT_FALSE(c.unitReady(0, d));  // nothing written yet
  c.write(reinterpret_cast<const std::byte*>(msg.data()), msg.size());
  std::vector<std::uint8_t> got(8, 0xEE);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(c.unitReady(i, d));
    std::memcpy(got.data() + 4 * i, &d, 4);
  }
  EXPECT_EQ(std::vector<std::uint8_t>(got.begin(), got.begin() + 7), msg);
  EXPECT_EQ(got[7], 0);  // padding carries zero data
  c.finishRead(msg.size());
  EXPECT_FALSE(c.unitReady(0, d));  // the next message is not there
}

// With a one-line ring and flag period 2 every message reuses the same units and the flags alternate
// 1, 2, 1, 2: what the reader finds before the sender rewrites is always the previous lap's flag.
TEST(LlLines, StaleUnitsAreNeverReadyAcrossManyFlagWraps) {
  LlConnection c(1, 2);
  for (std::uint32_t k = 0; k < 100; ++k) {
    std::uint32_t d = 0;
    for (std::size_t i = 0; i < kLlUnitsPerLine; ++i) ASSERT_FALSE(c.unitReady(i, d)) << "message " << k << " unit " << i;
    const std::size_t bytes = 1 + k % kLlDataBytesPerLine;  // varying lengths: padding units are rewritten too
    std::vector<std::uint8_t> msg(bytes);
    for (std::size_t i = 0; i < bytes; ++i) msg[i] = static_cast<std::uint8_t>(k * 7 + i);
    ASSERT_TRUE(c.hasRoom(bytes));
    c.write(reinterpret_cast<const std::byte*>(msg.data()), bytes);
    ASSERT_FALSE(c.hasRoom(1)) << "a one-line ring holds one message";
    std::vector<std::uint8_t> got(kLlDataBytesPerLine);
    for (std::size_t i = 0; i < kLlUnitsPerLine; ++i) {
      ASSERT_TRUE(c.unitReady(i, d)) << "message " << k << " unit " << i;
      std::memcpy(got.data() + 4 * i, &d, 4);
    }
    got.resize(bytes);
    ASSERT_EQ(got, msg) << "message " << k;
    c.finishRead(bytes);
    ASSERT_TRUE(c.hasRoom(kLlDataBytesPerLine));
  }
}

TEST(LlLines, BadRingSizesAndFlagPeriodsAreRefused) {
  EXPECT_THROW(LlConnection(0, 2), InvalidArgument);
  EXPECT_THROW(LlConnection(3, 2), InvalidArgument);  // not a power of two
  EXPECT_THROW(LlConnection(4, 1), InvalidArgument);  // flags would never change
  EXPECT_THROW(LlConnection(4, 3), InvalidArgument);  // not a power of two
  EXPECT_THROW(LlExecutor(2, std::chrono::nanoseconds(0), LlConfig{6, 2}), InvalidArgument);
  EXPECT_NO_THROW(LlConnection(1, kLlMaxFlagPeriod));
}

// ---- oneshot / twoshot on random data ----

// Random inputs of one type: floats in [-1, 1), small integers for Prod (no overflow: [-3, 3], uint8
// [0, 6]), any byte for int8/uint8 otherwise.
void fillRandom(DataType t, ReduceOp op, std::mt19937_64& rng, std::size_t n, std::byte* dst) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> small(-3, 3), medium(-1000, 1000), byte(0, 255);
  for (std::size_t i = 0; i < n; ++i) switch (t) {
      case DataType::Float32: {
        const auto v = static_cast<float>(unit(rng));
        std::memcpy(dst + i * 4, &v, 4);
        break;
      }
      case DataType::Float64: {
        const double v = unit(rng);
        std::memcpy(dst + i * 8, &v, 8);
        break;
      }
      case DataType::Float16: {
        const Half v = toHalf(static_cast<float>(unit(rng)));
        std::memcpy(dst + i * 2, &v, 2);
        break;
      }
      case DataType::BFloat16: {
        const BFloat16 v = toBFloat16(static_cast<float>(unit(rng)));
        std::memcpy(dst + i * 2, &v, 2);
        break;
      }
      case DataType::Int32: {
        const std::int32_t v = op == ReduceOp::Prod ? small(rng) : medium(rng);
        std::memcpy(dst + i * 4, &v, 4);
        break;
      }
      case DataType::Int8:
      case DataType::UInt8: {
        const auto v = static_cast<std::uint8_t>(op != ReduceOp::Prod ? byte(rng) : t == DataType::Int8 ? small(rng) : small(rng) + 3);
        std::memcpy(dst + i, &v, 1);
        break;
      }
    }
}

double valueAt(DataType t, const std::byte* p, std::size_t i) {
  switch (t) {
    case DataType::Float32: { float v; std::memcpy(&v, p + i * 4, 4); return v; }
    case DataType::Float64: { double v; std::memcpy(&v, p + i * 8, 8); return v; }
    case DataType::Float16: { Half v; std::memcpy(&v, p + i * 2, 2); return toFloat(v); }
    case DataType::BFloat16: { BFloat16 v; std::memcpy(&v, p + i * 2, 2); return toFloat(v); }
    case DataType::Int32: { std::int32_t v; std::memcpy(&v, p + i * 4, 4); return v; }
    case DataType::Int8: { std::int8_t v; std::memcpy(&v, p + i, 1); return v; }
    case DataType::UInt8: { std::uint8_t v; std::memcpy(&v, p + i, 1); return v; }
  }
  return 0;
}

double epsilonOf(DataType t) {
  switch (t) {
    case DataType::Float32: return 0x1p-23;
    case DataType::Float64: return 0x1p-52;
    case DataType::Float16: return 0x1p-10;
    case DataType::BFloat16: return 0x1p-7;
    default: return 0;
  }
}

// Checks element i of `got` against the reduction of `inputs` computed in double, in rank order:
// floats within the rounding of p - 1 operations (and Avg's division), integers exactly (int8/uint8
// wrap around as NCCL's do).
::testing::AssertionResult nearReference(DataType t, ReduceOp op, const std::vector<std::vector<std::byte>>& inputs,
                                         const std::byte* got, std::size_t i) {
  const int p = static_cast<int>(inputs.size());
  double ref = valueAt(t, inputs[0].data(), i), magnitude = std::abs(ref);
  for (int q = 1; q < p; ++q) {
    const double v = valueAt(t, inputs[static_cast<std::size_t>(q)].data(), i);
    magnitude += std::abs(v);
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg: ref += v; break;
      case ReduceOp::Prod: ref *= v; break;
      case ReduceOp::Min: ref = std::min(ref, v); break;
      case ReduceOp::Max: ref = std::max(ref, v); break;
    }
  }
  const double g = valueAt(t, got, i);
  if (!isFloating(t)) {
    auto wrapped = static_cast<std::int64_t>(ref);
    if (t == DataType::Int8) wrapped = static_cast<std::int8_t>(static_cast<std::uint8_t>(wrapped & 0xFF));
    if (t == DataType::UInt8) wrapped &= 0xFF;
    if (t == DataType::Int32) wrapped = static_cast<std::int32_t>(static_cast<std::uint32_t>(wrapped & 0xFFFFFFFF));
    if (op == ReduceOp::Avg) wrapped /= p;
    if (g == static_cast<double>(wrapped)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", reference " << wrapped;
  }
  if (op == ReduceOp::Avg) ref /= p;
  // Each of p - 1 roundings errs by at most eps/2 of a partial result bounded by the magnitude (Prod:
  // |values| < 1); Avg adds one more rounding of the quotient.
  const double scale = op == ReduceOp::Prod ? 1.0 : magnitude;
  const double tolerance = epsilonOf(t) * (p + 1) * scale + 1e-300;
  if (std::abs(g - ref) <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", double reference " << ref
                                       << " (tolerance " << tolerance << ")";
}

struct Call {
  Algorithm algo;
  std::int64_t count;
  DataType type;
  ReduceOp op;
  bool inPlace;
  std::vector<std::vector<std::byte>> inputs;   // per rank
  std::vector<std::vector<std::byte>> buffers;  // per rank: output (and input when in place)
};

// Every rank runs every call, in order, on its own thread (as ranks of a job do).
void runAllRanks(LlPath& path, int p, std::vector<Call>& calls, std::chrono::milliseconds timeout) {
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      try {
        for (Call& c : calls) {
          CollectiveOptions o;
          o.algorithm = c.algo;
          o.timeout = timeout;
          auto& out = c.buffers[static_cast<std::size_t>(r)];
          const void* send = c.inPlace ? out.data() : c.inputs[static_cast<std::size_t>(r)].data();
          if (!path.run(r, {Collective::AllReduce, c.count, c.type, c.op, 0}, c.algo, {send, out.data()}, o))
            throw Error("not run on the LL path");
        }
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < p; ++r) ASSERT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
}

// Every call in order on `shares` threads, thread t running ranks t, t + shares, ... cooperatively
// (LlPath::runShare, as a group call with more ranks than cores runs them).
void runAllShares(LlPath& path, int p, int shares, std::vector<Call>& calls, std::chrono::milliseconds timeout) {
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<std::size_t>(shares));
  for (int t = 0; t < shares; ++t)
    threads.emplace_back([&, t] {
      std::vector<int> ranks;
      for (int r = t; r < p; r += shares) ranks.push_back(r);
      try {
        for (Call& c : calls) {
          CollectiveOptions o;
          o.algorithm = c.algo;
          o.timeout = timeout;
          std::vector<RankBuffers> bufs;
          for (int r = 0; r < p; ++r) {
            auto& out = c.buffers[static_cast<std::size_t>(r)];
            bufs.push_back({c.inPlace ? out.data() : c.inputs[static_cast<std::size_t>(r)].data(), out.data()});
          }
          const CollectiveArgs args{Collective::AllReduce, c.count, c.type, c.op, 0};
          const plan::Plan* plan = path.planFor(ranks.front(), args, c.algo, {});
          if (plan == nullptr) throw Error("not for the LL path");
          path.runShare(ranks, args, *plan, bufs, o, std::chrono::microseconds(50));
        }
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(t)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int t = 0; t < shares; ++t) ASSERT_EQ(errors[static_cast<std::size_t>(t)], "") << "share " << t;
}

// shares 0: a thread per rank (runAllRanks); else runAllShares with that many threads.
void sweepOneShotTwoShot(LlConfig config, int shares = 0) {
  std::mt19937_64 rng(20261203);
  for (int p : {2, 3, 4, 5, 8}) {
    if (shares > p) continue;
    LlPath path(p, spinFor(p), kLlMaxBytesLimit, config);
    std::vector<Call> calls;
    int k = 0;
    for (Algorithm a : {Algorithm::OneShot, Algorithm::TwoShot})
      for (std::int64_t count : {1, 2, 3, 7, 13, 61})
        for (DataType t : kAllDataTypes)
          for (ReduceOp op : kAllReduceOps) {
            Call c{a, count, t, op, (k++ % 2) == 1, {}, {}};
            const std::size_t bytes = static_cast<std::size_t>(count) * sizeOf(t);
            for (int r = 0; r < p; ++r) {
              c.inputs.emplace_back(bytes);
              fillRandom(t, op, rng, static_cast<std::size_t>(count), c.inputs.back().data());
              c.buffers.emplace_back(c.inPlace ? c.inputs.back() : std::vector<std::byte>(bytes, std::byte{0xCD}));
            }
            calls.push_back(std::move(c));
          }
    if (shares == 0)
      runAllRanks(path, p, calls, std::chrono::seconds(20));
    else
      runAllShares(path, p, shares, calls, std::chrono::seconds(20));
    if (::testing::Test::HasFatalFailure()) return;
    for (const Call& c : calls) {
      const std::string what = "p=" + std::to_string(p) + " " + std::string(plan::name(c.algo)) + " count=" +
                               std::to_string(c.count) + " " + std::string(name(c.type)) + " " +
                               std::string(name(c.op)) + (c.inPlace ? " in place" : "");
      for (int r = 1; r < p; ++r)  // every rank reduced every element in the same order
        ASSERT_EQ(c.buffers[static_cast<std::size_t>(r)], c.buffers[0]) << what << ": rank " << r << " differs from rank 0";
      for (std::size_t i = 0; i < static_cast<std::size_t>(c.count); ++i)
        ASSERT_TRUE(nearReference(c.type, c.op, c.inputs, c.buffers[0].data(), i)) << what;
      // And exactly the left fold in rank order (ReduceAll's definition), in the element type.
      std::vector<std::byte> fold = c.inputs[0];
      const ReduceFn reduce = hostReduceFn(c.type, c.op);
      for (int q = 1; q < p; ++q) reduce(fold.data(), fold.data(), c.inputs[static_cast<std::size_t>(q)].data(), c.count);
      if (c.op == ReduceOp::Avg) finishAvg(fold.data(), static_cast<std::size_t>(c.count), c.type, p);
      ASSERT_EQ(c.buffers[0], fold) << what << ": not the rank-order fold";
    }
  }
}

TEST(LlPath, OneShotAndTwoShotMatchTheDoubleReferenceAndAreIdenticalOnEveryRank) {
  sweepOneShotTwoShot({});
}

// The same calls through a 16-line ring whose flags repeat every 2 laps: hundreds of calls of mixed
// sizes wrap the ring and the flags many times over.
TEST(LlPath, OneShotAndTwoShotStayCorrectAcrossRingAndFlagWraps) {
  sweepOneShotTwoShot({16, 2});
}

// Ranks run in shares (several ranks cooperatively on one thread, for more ranks than cores) give the
// same bits: identical on every rank and the rank-order fold, on 1, 2 and 3 threads, and across ring
// and flag wraps.
TEST(LlPath, RanksRunInSharesGiveTheSameBits) {
  for (int shares : {1, 2, 3}) {
    sweepOneShotTwoShot({}, shares);
    if (::testing::Test::HasFatalFailure()) return;
  }
  sweepOneShotTwoShot({16, 2}, 2);
}

// A share that waits for a rank nobody runs names it after the timeout, and does not hang.
TEST(LlPath, AShareWaitingForARankThatNeverArrivesNamesIt) {
  const int p = 3;
  LlPath path(p, spinFor(p), kLlMaxBytesLimit);
  std::vector<float> in(p * 16, 1.0F), out(p * 16);
  std::vector<RankBuffers> bufs;
  for (int r = 0; r < p; ++r) bufs.push_back({in.data() + r * 16, out.data() + r * 16});
  const CollectiveArgs args{Collective::AllReduce, 16, DataType::Float32, ReduceOp::Sum, 0};
  CollectiveOptions o;
  o.timeout = std::chrono::milliseconds(200);
  const plan::Plan* plan = path.planFor(0, args, Algorithm::OneShot, {});
  ASSERT_NE(plan, nullptr);
  const std::vector<int> share{0, 1};  // rank 2 never runs
  const auto start = std::chrono::steady_clock::now();
  try {
    path.runShare(share, args, *plan, bufs, o, std::chrono::microseconds(50));
    ADD_FAILURE() << "no timeout";
  } catch (const TimeoutError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("rank 2 never arrived"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << "no hang";
}

// The communicator's switch for shares: 0 and 1 run, anything else is refused naming the variable.
TEST(LlPath, TheSharesSwitchIsCheckedAndBothSettingsAreExact) {
  const char* old = std::getenv("CCLAB_LL_SHARES");
  const std::string saved = old ? old : "";
  const int p = static_cast<int>(std::max(1U, std::thread::hardware_concurrency())) + 2;  // more ranks than cores
  for (const char* setting : {"0", "1"}) {
    ::setenv("CCLAB_LL_SHARES", setting, 1);
    auto comm = makeCommunicator(Backend::Host, {p});
    const DataSpec spec{DataType::Float32, ReduceOp::Sum, p, 7};
    std::vector<std::vector<float>> in(static_cast<std::size_t>(p), std::vector<float>(13)),
        out(static_cast<std::size_t>(p), std::vector<float>(13));
    std::vector<RankBuffers> bufs;
    for (int r = 0; r < p; ++r) {
      fillInput(spec, r, 0, 13, in[static_cast<std::size_t>(r)].data());
      bufs.push_back({in[static_cast<std::size_t>(r)].data(), out[static_cast<std::size_t>(r)].data()});
    }
    for (Algorithm a : {Algorithm::OneShot, Algorithm::RecursiveDoubling, Algorithm::Ring}) {
      CollectiveOptions o;
      o.algorithm = a;
      comm->runGroup({Collective::AllReduce, 13, DataType::Float32, ReduceOp::Sum, 0}, bufs, o);
      std::vector<float> want(13);
      fillExpectedReduce(spec, 0, 13, want.data());
      for (int r = 0; r < p; ++r)
        EXPECT_EQ(countWrong(DataType::Float32, out[static_cast<std::size_t>(r)].data(), want.data(), 13), 0U)
            << "CCLAB_LL_SHARES=" << setting << " " << plan::name(a) << " rank " << r;
    }
  }
  ::setenv("CCLAB_LL_SHARES", "2", 1);
  try {
    makeCommunicator(Backend::Host, {p});
    ADD_FAILURE() << "accepted CCLAB_LL_SHARES=2";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("CCLAB_LL_SHARES"), std::string::npos) << e.what();
  }
  if (old)
    ::setenv("CCLAB_LL_SHARES", saved.c_str(), 1);
  else
    ::unsetenv("CCLAB_LL_SHARES");
}

// ---- every algorithm and collective, exact reference ----

TEST(LlPath, EveryAlgorithmAndCollectiveMatchesTheExactReference) {
  struct Shape {
    Collective c;
    Algorithm a;
  };
  const Shape shapes[] = {
      {Collective::AllReduce, Algorithm::Ring},       {Collective::AllReduce, Algorithm::Tree},
      {Collective::AllReduce, Algorithm::DoubleBinaryTree}, {Collective::AllReduce, Algorithm::HalvingDoubling},
      {Collective::AllReduce, Algorithm::RecursiveDoubling}, {Collective::AllReduce, Algorithm::OneShot},
      {Collective::AllReduce, Algorithm::TwoShot},    {Collective::ReduceScatter, Algorithm::Ring},
      {Collective::AllGather, Algorithm::Ring},       {Collective::Broadcast, Algorithm::Chain},
      {Collective::Broadcast, Algorithm::Tree},       {Collective::Reduce, Algorithm::Chain},
      {Collective::Reduce, Algorithm::Tree}};
  for (int p : {2, 3, 5, 8}) {
    LlPath path(p, spinFor(p), kLlMaxBytesLimit, {64, 2});  // p = 8: the ring reduce-scatter of 17 doubles sends 7 x 5 lines
    const int root = p - 1;
    for (const Shape& s : shapes)
      for (std::int64_t count : {1, 5, 17})
        for (DataType t : {DataType::Float32, DataType::Int8, DataType::Float64}) {
          const std::size_t w = sizeOf(t);
          const plan::BufferCounts bc = plan::bufferCounts(s.c, p, count);
          const DataSpec spec{t, ReduceOp::Sum, p, static_cast<std::uint64_t>(count * 131 + p)};
          std::vector<std::vector<std::byte>> in(static_cast<std::size_t>(p)), out(static_cast<std::size_t>(p));
          for (int r = 0; r < p; ++r) {
            in[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(bc.input) * w);
            fillInput(spec, r, 0, static_cast<std::size_t>(bc.input), in[static_cast<std::size_t>(r)].data());
            out[static_cast<std::size_t>(r)].assign(static_cast<std::size_t>(bc.output) * w, std::byte{0xCD});
          }
          std::vector<std::thread> threads;
          std::vector<std::string> errors(static_cast<std::size_t>(p));
          for (int r = 0; r < p; ++r)
            threads.emplace_back([&, r] {
              try {
                CollectiveOptions o;
                o.timeout = std::chrono::seconds(20);
                if (!path.run(r, {s.c, count, t, ReduceOp::Sum, root}, s.a,
                              {in[static_cast<std::size_t>(r)].data(), out[static_cast<std::size_t>(r)].data()}, o))
                  throw Error("not run on the LL path");
              } catch (const std::exception& e) {
                errors[static_cast<std::size_t>(r)] = e.what();
              }
            });
          for (auto& th : threads) th.join();
          const std::string what = std::string(plan::name(s.c)) + "/" + std::string(plan::name(s.a)) + " p=" +
                                   std::to_string(p) + " count=" + std::to_string(count) + " " + std::string(name(t));
          std::vector<std::byte> want(static_cast<std::size_t>(bc.output) * w);
          for (int r = 0; r < p; ++r) {
            ASSERT_EQ(errors[static_cast<std::size_t>(r)], "") << what << " rank " << r;
            const auto n = static_cast<std::size_t>(count);
            switch (s.c) {
              case Collective::AllReduce: fillExpectedReduce(spec, 0, n, want.data()); break;
              case Collective::Reduce:
                if (r != root) continue;
                fillExpectedReduce(spec, 0, n, want.data());
                break;
              case Collective::ReduceScatter: fillExpectedReduce(spec, r * count, n, want.data()); break;
              case Collective::AllGather:
                for (int q = 0; q < p; ++q) fillInput(spec, q, 0, n, want.data() + static_cast<std::size_t>(q) * n * w);
                break;
              case Collective::Broadcast: fillInput(spec, root, 0, n, want.data()); break;
            }
            EXPECT_EQ(countWrong(t, out[static_cast<std::size_t>(r)].data(), want.data(), static_cast<std::size_t>(bc.output)), 0U)
                << what << " rank " << r;
          }
        }
  }
}

// Plans of several channels (run here one channel after the other) give the exact result too.
TEST(LlPath, MultiChannelPlansMatchTheExactReference) {
  for (int p : {2, 3, 5}) {
    LlPath path(p, spinFor(p), kLlMaxBytesLimit, {64, 2});
    for (int channels : {2, 4})
      for (Algorithm a : {Algorithm::Ring, Algorithm::DoubleBinaryTree, Algorithm::OneShot, Algorithm::TwoShot})
        for (std::int64_t count : {1, 7, 61}) {
          const DataSpec spec{DataType::Float32, ReduceOp::Sum, p, static_cast<std::uint64_t>(count + 17 * channels)};
          const auto n = static_cast<std::size_t>(count);
          std::vector<std::vector<float>> in(static_cast<std::size_t>(p), std::vector<float>(n)),
              out(static_cast<std::size_t>(p), std::vector<float>(n, -1.0f));
          for (int r = 0; r < p; ++r) fillInput(spec, r, 0, n, in[static_cast<std::size_t>(r)].data());
          std::vector<std::thread> threads;
          std::vector<std::string> errors(static_cast<std::size_t>(p));
          for (int r = 0; r < p; ++r)
            threads.emplace_back([&, r] {
              try {
                CollectiveOptions o;
                o.timeout = std::chrono::seconds(20);
                if (!path.run(r, {Collective::AllReduce, count, DataType::Float32, ReduceOp::Sum, 0}, a,
                              plan::PlanShape{channels, 0},
                              {in[static_cast<std::size_t>(r)].data(), out[static_cast<std::size_t>(r)].data()}, o))
                  throw Error("not run on the LL path");
              } catch (const std::exception& e) {
                errors[static_cast<std::size_t>(r)] = e.what();
              }
            });
          for (auto& t : threads) t.join();
          std::vector<float> want(n);
          fillExpectedReduce(spec, 0, n, want.data());
          for (int r = 0; r < p; ++r) {
            const std::string what = std::string(plan::name(a)) + " p=" + std::to_string(p) + " channels=" +
                                     std::to_string(channels) + " count=" + std::to_string(count) + " rank " +
                                     std::to_string(r);
            ASSERT_EQ(errors[static_cast<std::size_t>(r)], "") << what;
            EXPECT_EQ(countWrong(DataType::Float32, out[static_cast<std::size_t>(r)].data(), want.data(), n), 0U) << what;
          }
        }
  }
}

// ---- what does not go to LL ----

TEST(LlPath, CallsAboveTheRingCapacityOrTheThresholdAreLeftToTheSlotExecutor) {
  const int p = 3;
  // A 16-line ring carries 512 data bytes per connection and call: oneshot sends its whole vector.
  LlPath path(p, spinFor(p), kLlMaxBytesLimit, {16, kLlMaxFlagPeriod});
  const auto fits = [&](Algorithm a, std::int64_t count) {
    return path.executor().fits(plan::makePlan(Collective::AllReduce, a, p, count), 4);
  };
  EXPECT_TRUE(fits(Algorithm::OneShot, 128));    // 512 bytes: exactly the ring
  EXPECT_FALSE(fits(Algorithm::OneShot, 129));   // one line more
  EXPECT_TRUE(fits(Algorithm::TwoShot, 129));    // a third of it each way, twice
  std::vector<float> in(129, 1.0f), out(129, 0.0f);
  CollectiveOptions o;
  // Refused before any work: returns false at once, no wait, buffers untouched.
  EXPECT_FALSE(path.run(0, {Collective::AllReduce, 129, DataType::Float32, ReduceOp::Sum, 0}, Algorithm::OneShot,
                        {in.data(), out.data()}, o));
  EXPECT_EQ(out[0], 0.0f);
  LlPath small(p, spinFor(p), 64);  // threshold 64 bytes
  EXPECT_FALSE(small.run(0, {Collective::AllReduce, 17, DataType::Float32, ReduceOp::Sum, 0}, Algorithm::OneShot,
                         {in.data(), out.data()}, o));
  LlPath off(p, spinFor(p), 0);  // LL off
  EXPECT_FALSE(off.run(0, {Collective::AllReduce, 1, DataType::Float32, ReduceOp::Sum, 0}, Algorithm::OneShot,
                       {in.data(), out.data()}, o));
}

// Through the communicator: sizes on both sides of the LL threshold and of the ring capacity give the
// same exact results.
TEST(LlPath, TheCommunicatorRunsBothSidesOfTheThresholdCorrectly) {
  for (int p : {2, 4}) {
    auto comm = makeCommunicator(Backend::Host, {p});
    const auto edge = static_cast<std::int64_t>(kLlDefaultMaxBytes / sizeof(float));
    for (std::int64_t count : {std::int64_t{1}, std::int64_t{2}, edge - 1, edge, edge + 1, std::int64_t{5000}})
      for (Algorithm a : {Algorithm::Ring, Algorithm::RecursiveDoubling, Algorithm::Auto}) {
        const DataSpec spec{DataType::Float32, ReduceOp::Sum, p, static_cast<std::uint64_t>(count)};
        const auto n = static_cast<std::size_t>(count);
        std::vector<std::vector<float>> in(static_cast<std::size_t>(p), std::vector<float>(n)),
            out(static_cast<std::size_t>(p), std::vector<float>(n));
        std::vector<RankBuffers> bufs;
        for (int r = 0; r < p; ++r) {
          fillInput(spec, r, 0, n, in[static_cast<std::size_t>(r)].data());
          bufs.push_back({in[static_cast<std::size_t>(r)].data(), out[static_cast<std::size_t>(r)].data()});
        }
        CollectiveOptions o;
        o.algorithm = a;
        comm->runGroup({Collective::AllReduce, count, DataType::Float32, ReduceOp::Sum, 0}, bufs, o);
        std::vector<float> want(n);
        fillExpectedReduce(spec, 0, n, want.data());
        for (int r = 0; r < p; ++r)
          EXPECT_EQ(countWrong(DataType::Float32, out[static_cast<std::size_t>(r)].data(), want.data(), n), 0U)
              << "p=" << p << " count=" << count << " " << plan::name(a) << " rank " << r;
      }
  }
}

TEST(LlPath, AMalformedThresholdVariableIsRefusedNamingIt) {
  const char* old = std::getenv("CCLAB_LL_MAX_BYTES");
  const std::string saved = old ? old : "";
  for (const char* bad : {"", "12x", "-1", "99999999999"}) {
    ::setenv("CCLAB_LL_MAX_BYTES", bad, 1);
    try {
      llMaxBytesFromEnvironment();
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("CCLAB_LL_MAX_BYTES"), std::string::npos) << e.what();
    }
  }
  ::setenv("CCLAB_LL_MAX_BYTES", "512", 1);
  EXPECT_EQ(llMaxBytesFromEnvironment(), 512U);
  if (old)
    ::setenv("CCLAB_LL_MAX_BYTES", saved.c_str(), 1);
  else
    ::unsetenv("CCLAB_LL_MAX_BYTES");
}

// ---- failures ----

TEST(LlPath, ARankThatNeverArrivesIsNamedAfterTheTimeout) {
  for (Algorithm a : {Algorithm::OneShot, Algorithm::TwoShot}) {
    const int p = 4, late = 2;
    LlPath path(p, spinFor(p), kLlMaxBytesLimit);
    std::vector<std::string> errors(static_cast<std::size_t>(p));
    std::vector<std::thread> threads;
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < p; ++r) {
      if (r == late) continue;
      threads.emplace_back([&, r] {
        std::vector<float> in(16, 1.0f), out(16);
        CollectiveOptions o;
        o.timeout = std::chrono::milliseconds(200);
        try {
          path.run(r, {Collective::AllReduce, 16, DataType::Float32, ReduceOp::Sum, 0}, a, {in.data(), out.data()}, o);
        } catch (const TimeoutError& e) {
          errors[static_cast<std::size_t>(r)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << "no hang";
    for (int r = 0; r < p; ++r) {
      if (r == late) continue;
      const std::string& m = errors[static_cast<std::size_t>(r)];
      EXPECT_NE(m.find("rank 2 never arrived"), std::string::npos) << plan::name(a) << " rank " << r << ": " << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
    }
    // The rings are out of step now: a later call refuses to run.
    std::vector<float> in(16, 1.0f), out(16);
    EXPECT_THROW(path.run(0, {Collective::AllReduce, 16, DataType::Float32, ReduceOp::Sum, 0}, a,
                          {in.data(), out.data()}, {}),
                 Error);
  }
}

TEST(LlPath, AStragglerIsWaitedForWithinTheTimeoutAndRefusedBeyondIt) {
  const int p = 2;
  for (auto delay : {std::chrono::milliseconds(20), std::chrono::milliseconds(400)}) {
    LlPath path(p, spinFor(p), kLlMaxBytesLimit);
    std::vector<std::string> errors(static_cast<std::size_t>(p));
    std::vector<std::vector<float>> out(static_cast<std::size_t>(p), std::vector<float>(3));
    std::vector<std::thread> threads;
    for (int r = 0; r < p; ++r)
      threads.emplace_back([&, r] {
        std::vector<float> in(3, static_cast<float>(r + 1));
        CollectiveOptions o;
        o.timeout = std::chrono::milliseconds(200);
        o.straggler.rank = 1;
        o.straggler.startDelay = delay;
        try {
          path.run(r, {Collective::AllReduce, 3, DataType::Float32, ReduceOp::Sum, 0}, Algorithm::OneShot,
                   {in.data(), out[static_cast<std::size_t>(r)].data()}, o);
        } catch (const TimeoutError& e) {
          errors[static_cast<std::size_t>(r)] = e.what();
        }
      });
    for (auto& t : threads) t.join();
    if (delay < std::chrono::milliseconds(200)) {
      for (int r = 0; r < p; ++r) {
        EXPECT_EQ(errors[static_cast<std::size_t>(r)], "");
        EXPECT_EQ(out[static_cast<std::size_t>(r)], std::vector<float>(3, 3.0f));
      }
    } else {
      // Whichever timeout fires first (the straggler's own, or rank 0's wait for it), both end and
      // both name the straggler's delay or the straggler.
      EXPECT_NE(errors[1].find("start delay"), std::string::npos) << errors[1];
      EXPECT_NE(errors[0].find("rank 1"), std::string::npos) << "rank 0 must not wait past its timeout: " << errors[0];
    }
  }
}

TEST(LlPath, MergedArrivalStatsAddCallsAndLatenessAndMaxTheMaxima) {
  ArrivalStats a, b;
  a.calls = 2;
  a.ranks = {{2, std::chrono::nanoseconds(10), std::chrono::nanoseconds(7), 1}};
  b.calls = 3;
  b.incomplete = true;
  b.ranks = {{3, std::chrono::nanoseconds(5), std::chrono::nanoseconds(9), 2}};
  const ArrivalStats m = mergeArrivalStats(a, b);
  EXPECT_EQ(m.calls, 5);
  EXPECT_TRUE(m.incomplete);
  ASSERT_EQ(m.ranks.size(), 1U);
  EXPECT_EQ(m.ranks[0].calls, 5);
  EXPECT_EQ(m.ranks[0].totalLateness, std::chrono::nanoseconds(15));
  EXPECT_EQ(m.ranks[0].maxLateness, std::chrono::nanoseconds(9));
  EXPECT_EQ(m.ranks[0].lastCount, 3);
}

}  // namespace
}  // namespace cclab::host

namespace cclab {
namespace {

// auto's small-message table: oneshot below twoshot, both inside the LL threshold (so these calls
// never reach the slot executor), used on the host only and only for measured rank counts.
TEST(AutoSmallMessages, TheHostTableStaysOnTheLlPathAndOtherBackendsKeepTheOldRule) {
  std::size_t previous = 0;
  for (const HostAutoSmallRow& row : kHostAutoSmall) {
    EXPECT_LE(row.oneshotBytes, row.twoshotBytes) << row.nranks;
    EXPECT_LE(row.twoshotBytes, host::kLlDefaultMaxBytes) << row.nranks;
    EXPECT_GT(static_cast<std::size_t>(row.nranks), previous) << "rows in rank order";
    previous = static_cast<std::size_t>(row.nranks);
  }
  for (const HostAutoSmallRow& row : kHostAutoSmall) {
    CollectiveArgs a{plan::Collective::AllReduce, 1, DataType::Float32, ReduceOp::Sum, 0};
    if (row.oneshotBytes >= 4) {
      EXPECT_EQ(autoAlgorithm(a, row.nranks, Backend::Host), plan::Algorithm::OneShot);
    }
    EXPECT_EQ(autoAlgorithm(a, row.nranks, Backend::Cuda), autoAlgorithm(a, row.nranks));
    a.count = static_cast<std::int64_t>(row.twoshotBytes / 4) + 1;  // just above the table
    EXPECT_EQ(autoAlgorithm(a, row.nranks, Backend::Host), autoAlgorithm(a, row.nranks));
    a.collective = plan::Collective::ReduceScatter;
    a.count = 1;
    EXPECT_EQ(autoAlgorithm(a, row.nranks, Backend::Host), plan::Algorithm::Ring);
  }
  const int beyond = kHostAutoSmall[std::size(kHostAutoSmall) - 1].nranks + 1;
  const CollectiveArgs tiny{plan::Collective::AllReduce, 1, DataType::Float32, ReduceOp::Sum, 0};
  EXPECT_EQ(autoAlgorithm(tiny, beyond, Backend::Host), autoAlgorithm(tiny, beyond)) << "unmeasured rank count";
}

// The process backend's table (kProcAutoSmall) is read the same way, on the proc backend only.
TEST(AutoSmallMessages, TheProcTableIsReadForTheProcBackendOnly) {
  int previous = 0;
  for (const HostAutoSmallRow& row : kProcAutoSmall) {
    EXPECT_GT(row.nranks, previous) << "rows in rank order";
    previous = row.nranks;
    CollectiveArgs a{plan::Collective::AllReduce, 1, DataType::Float32, ReduceOp::Sum, 0};
    const plan::Algorithm small = autoAlgorithm(a, row.nranks, Backend::Proc);
    EXPECT_EQ(small, row.oneshotBytes >= 4 ? plan::Algorithm::OneShot : autoAlgorithm(a, row.nranks)) << row.nranks;
    a.count = static_cast<std::int64_t>(std::max(row.oneshotBytes, row.twoshotBytes) / 4) + 1;  // just above the table
    EXPECT_EQ(autoAlgorithm(a, row.nranks, Backend::Proc), autoAlgorithm(a, row.nranks)) << row.nranks;
  }
  const CollectiveArgs tiny{plan::Collective::AllReduce, 1, DataType::Float32, ReduceOp::Sum, 0};
  const int beyond = kProcAutoSmall[std::size(kProcAutoSmall) - 1].nranks + 1;
  EXPECT_EQ(autoAlgorithm(tiny, beyond, Backend::Proc), autoAlgorithm(tiny, beyond)) << "unmeasured rank count";
}

}  // namespace
}  // namespace cclab
