// Gathered one-shot allreduce group calls (LlExecutor::gathers, ll_executor.h): the workers only send
// their inputs to rank 0, rank 0 folds and writes every rank's output, and the call returns without a
// done word. Which plans qualify (and that `auto` at 8 bytes and 2 ranks is one); exact, bit-identical
// results on every rank against the rank-order fold and the exact reference, on random odd counts at
// 2, 3 and 4 ranks (a worker per rank: shares off), every type and op, in place and out of place, over
// repeated calls on alternating buffers (nothing written into a buffer after its call returned); the
// same bits with the gathered path off; a straggler within the timeout waited for (the call cannot
// return before its message), one beyond it a one-line TimeoutError and a broken communicator; the
// arrival log (rank 0 records the workers' arrivals) counts every call and shows the straggler late.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/call/auto_rule.h"
#include "collectives/core/test_data.h"
#include "collectives/host/ll_executor.h"

namespace cclab::host {
namespace {

using plan::Algorithm;
using plan::Collective;

// Sets an environment variable for the scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(GatheredOneShot, OnlyOneChannelOneShotAllReducesQualifyAndAutoPicksOneAtEightBytesTwoRanks) {
  for (int p : {2, 3, 4, 8})
    for (std::int64_t count : {1, 2, 37}) {
      EXPECT_TRUE(LlExecutor::gathers(plan::makePlan(Collective::AllReduce, Algorithm::OneShot, p, count, 0, {})))
          << "p=" << p << " count=" << count;
      for (Algorithm a : {Algorithm::TwoShot, Algorithm::RecursiveDoubling, Algorithm::Ring})
        EXPECT_FALSE(LlExecutor::gathers(plan::makePlan(Collective::AllReduce, a, p, count, 0, {})))
            << plan::name(a) << " p=" << p;
      EXPECT_FALSE(LlExecutor::gathers(plan::makePlan(Collective::AllReduce, Algorithm::OneShot, p, 64, 0, {2, 0})))
          << "two channels, p=" << p;
    }
  EXPECT_FALSE(LlExecutor::gathers(plan::makePlan(Collective::AllReduce, Algorithm::OneShot, 1, 5, 0, {})));
  EXPECT_FALSE(LlExecutor::gathers(plan::makePlan(Collective::AllReduce, Algorithm::OneShot, 2, 0, 0, {})))
      << "an empty call: a worker would still be in it when rank 0 returns";
  // A plan that is not one (a rank's sends changed) is refused.
  plan::Plan bad = plan::makePlan(Collective::AllReduce, Algorithm::OneShot, 3, 8, 0, {});
  bad.ranks[1][0].src.count = 4;
  EXPECT_FALSE(LlExecutor::gathers(bad));
  const CollectiveArgs eight{Collective::AllReduce, 2, DataType::Float32, ReduceOp::Sum, 0};
  const Algorithm picked = autoAlgorithm(eight, 2, Backend::Host);
  EXPECT_EQ(picked, Algorithm::OneShot);
  EXPECT_TRUE(LlExecutor::gathers(plan::makePlan(Collective::AllReduce, picked, 2, 2, 0, {})));
}

// Buffers of p ranks, `bytes` each; in place: the output is the input.
struct RankSet {
  RankSet(int p, std::size_t bytes, bool inPlace) : in(static_cast<std::size_t>(p)), out(static_cast<std::size_t>(p)) {
    for (int r = 0; r < p; ++r) {
      in[static_cast<std::size_t>(r)].assign(bytes, std::byte{0});
      out[static_cast<std::size_t>(r)].assign(bytes, std::byte{0});
      auto* o = inPlace ? in[static_cast<std::size_t>(r)].data() : out[static_cast<std::size_t>(r)].data();
      bufs.push_back({in[static_cast<std::size_t>(r)].data(), o});
    }
  }
  std::vector<std::vector<std::byte>> in, out;
  std::vector<RankBuffers> bufs;
};

// Runs a call on `set` with fresh inputs (seed), then checks every rank's output bit for bit against
// the rank-order fold (ReduceAll's definition) and the exact reference. Returns the fold.
std::vector<std::byte> runAndCheck(Communicator& comm, const CollectiveArgs& args, const CollectiveOptions& o,
                                   RankSet& set, std::uint64_t seed, const std::string& what) {
  const int p = comm.nranks();
  const auto n = static_cast<std::size_t>(args.count);
  const std::size_t bytes = n * sizeOf(args.type);
  const DataSpec spec{args.type, args.op, p, seed};
  for (int r = 0; r < p; ++r) fillInput(spec, r, 0, n, const_cast<void*>(set.bufs[static_cast<std::size_t>(r)].send));
  std::vector<std::byte> fold(static_cast<const std::byte*>(set.bufs[0].send), static_cast<const std::byte*>(set.bufs[0].send) + bytes);
  const ReduceFn reduce = hostReduceFn(args.type, args.op);
  for (int q = 1; q < p; ++q) reduce(fold.data(), fold.data(), set.bufs[static_cast<std::size_t>(q)].send, n);
  if (args.op == ReduceOp::Avg) finishAvg(fold.data(), n, args.type, p);
  std::vector<std::byte> want(bytes);
  fillExpectedReduce(spec, 0, n, want.data());
  comm.runGroup(args, set.bufs, o);
  for (int r = 0; r < p; ++r) {
    const auto* got = static_cast<const std::byte*>(set.bufs[static_cast<std::size_t>(r)].recv);
    EXPECT_EQ(std::memcmp(got, fold.data(), bytes), 0) << what << ": rank " << r << " is not the rank-order fold";
    EXPECT_EQ(countWrong(args.type, got, want.data(), n), 0U) << what << ": rank " << r << " vs the exact reference";
  }
  return fold;
}

// gather "1": the gathered path; "0": every rank folds and reports done. `folds` gets every call's fold.
void sweep(const char* gather, std::vector<std::vector<std::byte>>& folds) {
  ScopedEnv shares("CCLAB_LL_SHARES", "0");  // a worker per rank at 3 and 4 ranks too
  ScopedEnv env("CCLAB_LL_GATHER", gather);
  std::mt19937_64 rng(20261203);
  for (int p : {2, 3, 4}) {
    auto comm = makeCommunicator(Backend::Host, {p});
    for (DataType t : kAllDataTypes)
      for (ReduceOp op : kAllReduceOps)
        for (bool inPlace : {false, true}) {
          // Random odd counts within the LL threshold (1 KiB).
          const std::int64_t count = 2 * static_cast<std::int64_t>(rng() % (512 / sizeOf(t) / 2)) + 1;
          const std::size_t bytes = static_cast<std::size_t>(count) * sizeOf(t);
          // Two sets of buffers, alternated over repeated calls: after each call the other set's
          // outputs hold a sentinel that must survive (no rank writes a buffer after its call returned).
          RankSet a(p, bytes, inPlace), b(p, bytes, inPlace);
          CollectiveOptions o;
          o.algorithm = (folds.size() % 2 == 0) ? Algorithm::OneShot : Algorithm::Auto;
          if (o.algorithm == Algorithm::Auto && autoAlgorithm({Collective::AllReduce, count, t, op, 0}, p, Backend::Host) !=
                                                     Algorithm::OneShot)
            o.algorithm = Algorithm::OneShot;
          const CollectiveArgs args{Collective::AllReduce, count, t, op, 0};
          const std::string what = "gather=" + std::string(gather) + " p=" + std::to_string(p) + " " +
                                   std::string(name(t)) + " " + std::string(name(op)) + " count=" +
                                   std::to_string(count) + (inPlace ? " in place" : "");
          for (int call = 0; call < 6; ++call) {
            RankSet& now = call % 2 == 0 ? a : b;
            RankSet& other = call % 2 == 0 ? b : a;
            for (auto& v : other.in) std::fill(v.begin(), v.end(), std::byte{0xA5});
            for (auto& v : other.out) std::fill(v.begin(), v.end(), std::byte{0xA5});
            folds.push_back(runAndCheck(*comm, args, o, now, folds.size() + 1, what + " call " + std::to_string(call)));
            if (::testing::Test::HasFailure()) return;
            for (int r = 0; r < p; ++r) {
              const auto* q = static_cast<const std::byte*>(other.bufs[static_cast<std::size_t>(r)].recv);
              for (std::size_t i = 0; i < bytes; ++i)
                ASSERT_EQ(q[i], std::byte{0xA5}) << what << ": rank " << r << "'s idle buffer was written";
            }
          }
        }
  }
}

TEST(GatheredOneShot, ExactAndBitIdenticalOnEveryRankAtTwoThreeFourRanksAndTheSameAsWithoutGathering) {
  std::vector<std::vector<std::byte>> gathered, plain;
  sweep("1", gathered);
  if (::testing::Test::HasFailure()) return;
  sweep("0", plain);
  if (::testing::Test::HasFailure()) return;
  ASSERT_EQ(gathered.size(), plain.size());
  for (std::size_t i = 0; i < gathered.size(); ++i) ASSERT_EQ(gathered[i], plain[i]) << "call " << i;
}

// The call cannot return before rank 0 has the straggler's message: a 40 ms start delay (within the
// timeout) makes the call last at least that long and its result is exact; the next calls are exact.
// A delay beyond the timeout ends in a one-line TimeoutError naming the straggler, within seconds, and
// every later call is refused (the executor is broken, as after any LL timeout).
TEST(GatheredOneShot, AStragglerIsWaitedForWithinTheTimeoutAndEndsInOneLineTimeoutErrorBeyondIt) {
  ScopedEnv shares("CCLAB_LL_SHARES", "0");
  ScopedEnv env("CCLAB_LL_GATHER", "1");
  for (int p : {2, 3, 4}) {
    auto comm = makeCommunicator(Backend::Host, {p});
    RankSet set(p, 13 * 4, false);
    const CollectiveArgs args{Collective::AllReduce, 13, DataType::Float32, ReduceOp::Sum, 0};
    CollectiveOptions o;
    o.algorithm = Algorithm::OneShot;
    o.timeout = std::chrono::seconds(5);
    runAndCheck(*comm, args, o, set, 1, "warm-up");
    o.straggler.rank = p - 1;
    o.straggler.startDelay = std::chrono::milliseconds(40);
    const auto t0 = std::chrono::steady_clock::now();
    runAndCheck(*comm, args, o, set, 2, "p=" + std::to_string(p) + " straggler within the timeout");
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(40))
        << "p=" << p << ": returned before the straggler's message";
    o.straggler = {};
    for (std::uint64_t s = 3; s < 6; ++s) runAndCheck(*comm, args, o, set, s, "p=" + std::to_string(p) + " after");
    o.timeout = std::chrono::milliseconds(150);
    o.straggler.rank = p - 1;
    o.straggler.startDelay = std::chrono::milliseconds(600);
    const auto t1 = std::chrono::steady_clock::now();
    try {
      comm->runGroup(args, set.bufs, o);
      ADD_FAILURE() << "p=" << p << ": a straggler 4x the timeout did not time out";
    } catch (const TimeoutError& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
      EXPECT_NE(m.find("rank " + std::to_string(p - 1)), std::string::npos) << m;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t1, std::chrono::seconds(5)) << "no hang";
    o.straggler = {};
    EXPECT_THROW(comm->runGroup(args, set.bufs, o), Error) << "a later call must refuse, not hang";
  }
}

// Rank 0 records the workers' arrivals in a gathered call: every call is counted for every rank, and
// a straggler's start delay shows as its lateness (it arrives last, at least the delay after rank 0).
TEST(GatheredOneShot, ArrivalsAreCountedForEveryRankAndAStragglerIsLate) {
  ScopedEnv shares("CCLAB_LL_SHARES", "0");
  ScopedEnv env("CCLAB_LL_GATHER", "1");
  for (int p : {2, 3}) {
    auto comm = makeCommunicator(Backend::Host, {p});
    RankSet set(p, 7 * 4, false);
    const CollectiveArgs args{Collective::AllReduce, 7, DataType::Float32, ReduceOp::Sum, 0};
    CollectiveOptions o;
    o.algorithm = Algorithm::OneShot;
    o.timeout = std::chrono::seconds(5);
    comm->resetArrivalStats();
    constexpr int kCalls = 40;  // more than the log's batches of 16
    for (int i = 0; i < kCalls; ++i) runAndCheck(*comm, args, o, set, 10 + static_cast<std::uint64_t>(i), "arrivals");
    o.straggler.rank = p - 1;
    o.straggler.startDelay = std::chrono::milliseconds(30);
    runAndCheck(*comm, args, o, set, 99, "straggler");
    const auto stats = comm->arrivalStats();
    ASSERT_TRUE(stats.has_value());
    EXPECT_FALSE(stats->incomplete);
    EXPECT_EQ(stats->calls, kCalls + 1) << "p=" << p;
    ASSERT_EQ(stats->ranks.size(), static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) EXPECT_EQ(stats->ranks[static_cast<std::size_t>(r)].calls, kCalls + 1) << "rank " << r;
    const RankArrivals& late = stats->ranks[static_cast<std::size_t>(p - 1)];
    EXPECT_GE(late.maxLateness, std::chrono::milliseconds(30)) << "p=" << p;
    EXPECT_GE(late.lastCount, 1) << "p=" << p;
    EXPECT_LT(stats->ranks[0].maxLateness, std::chrono::milliseconds(30)) << "p=" << p;
  }
}

TEST(GatheredOneShot, TheSwitchIsChecked) {
  ScopedEnv env("CCLAB_LL_GATHER", "2");
  try {
    makeCommunicator(Backend::Host, {2});
    ADD_FAILURE() << "accepted CCLAB_LL_GATHER=2";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("CCLAB_LL_GATHER"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cclab::host
