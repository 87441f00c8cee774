#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "collectives/core/errors.h"
#include "collectives/plan/op_source.h"
#include "sim/analytic.h"
#include "sim/presets.h"
#include "sim/replay.h"
#include "sim/topology.h"

using namespace cclab;
using namespace cclab::sim;
using plan::Algorithm;
using plan::Collective;

namespace {

TopologySpec switchOf(int p, Micros lat = 1, GBps bw = 10) {
  TopologySpec s;
  s.name = "sw";
  s.kind = TopologyKind::Switch;
  s.ranks = p;
  s.classes["link"] = {lat, bw};
  return s;
}

plan::Plan sendPlan(int p, std::vector<std::pair<int, int>> pairs, std::int64_t count) {
  plan::Plan pl;
  pl.nranks = p;
  pl.count = count;
  pl.ranks.resize(static_cast<std::size_t>(p));
  for (auto [s, d] : pairs) {
    pl.ranks[s].push_back({plan::OpKind::Send, d, 0, {plan::Buf::Input, 0, count}, {}});
    pl.ranks[d].push_back({plan::OpKind::Recv, s, 0, {}, {plan::Buf::Output, 0, count}});
  }
  return pl;
}

}  // namespace

TEST(Replay, OneMessage) {
  const Topology t(switchOf(2, 1.0, 10));
  ReplayOptions o;
  o.sliceElems = -1;
  const auto r = replay(sendPlan(2, {{0, 1}}, 2500), t, o);  // 10 KB at 10 GB/s = 1 µs, 2 hops of 1 µs
  EXPECT_NEAR(r.time, 3.0, 1e-12);
  EXPECT_NEAR(r.finish[0], 0.0, 1e-12);
  EXPECT_NEAR(r.finish[1], 3.0, 1e-12);
  EXPECT_EQ(r.steps, 2);
}

TEST(Replay, SharedLinkSerialisesMessages) {
  // Ranks 0 and 1 both send to rank 2: its switch->rank2 link carries both, one after the other.
  const Topology t(switchOf(3, 0.0, 10));
  ReplayOptions o;
  o.sliceElems = -1;
  const auto r = replay(sendPlan(3, {{0, 2}, {1, 2}}, 2500), t, o);
  EXPECT_NEAR(r.time, 2.0, 1e-12);
  const int down = t.findResource("switch->rank2");
  EXPECT_NEAR(r.busy[down], 2.0, 1e-12);
  EXPECT_EQ(r.bytes[down], 20000);
  // Disjoint pairs do not contend.
  const Topology t4(switchOf(4, 0.0, 10));
  EXPECT_NEAR(replay(sendPlan(4, {{0, 1}, {2, 3}}, 2500), t4, o).time, 1.0, 1e-12);
}

TEST(Replay, NodeCapacityIsShared) {
  // Host backend: all copies cross one memory bus; two at once take twice as long on it.
  TopologySpec s = resized(*findPreset("host"), 4);
  s.classes["thread"] = {0.0, 1000};
  s.classes["memory"] = {0.0, 10};
  s.compute.wakeLatency = 0;
  const Topology t(s);
  ReplayOptions o;
  o.sliceElems = -1;
  EXPECT_NEAR(replay(sendPlan(4, {{0, 1}}, 2500), t, o).time, 1.0, 1e-12);
  EXPECT_NEAR(replay(sendPlan(4, {{0, 1}, {2, 3}}, 2500), t, o).time, 2.0, 1e-12);
}

TEST(Replay, OversubscribedHostAddsWakeLatency) {
  TopologySpec s = resized(*findPreset("host"), 2);
  s.compute.wakeLatency = 7;
  const Micros two = Topology(s).route(0, 1).latency;
  const Micros four = Topology(resized(s, 4)).route(0, 1).latency;
  EXPECT_NEAR(four - two, 7.0, 1e-12);  // 4 threads on 2 cores wait in the OS
}

TEST(Replay, StartDelayOfOneRankDelaysTheRing) {
  const int p = 8;
  const Topology t(switchOf(p));
  const auto pl = plan::allReduceRing(p, 8 * 1024);
  ReplayOptions o;
  o.sliceElems = -1;
  const Micros base = replay(pl, t, o).time;
  o.stragglers = {Straggler{.rank = 3, .startDelay = std::chrono::microseconds(100)}};
  EXPECT_NEAR(replay(pl, t, o).time, base + 100, 1e-9);
}

TEST(Replay, SlowLinkAndSlowComputeSlowTheRing) {
  const int p = 8;
  TopologySpec s = switchOf(p, 0.0, 10);
  s.compute.reduceBandwidth = 20;
  const Topology t(s);
  const auto pl = plan::allReduceRing(p, 1 << 20);
  ReplayOptions o;
  const Micros base = replay(pl, t, o).time;
  ReplayOptions link = o;
  link.resourceSlowdown.assign(t.resources().size(), 1.0);
  link.resourceSlowdown[t.findResource("rank2->switch")] = 2.0;
  const Micros slowLink = replay(pl, t, link).time;
  EXPECT_GT(slowLink, 1.3 * base);
  ReplayOptions comp = o;
  comp.stragglers = {Straggler{.rank = 5, .computeFactor = 4.0}};
  const Micros slowCompute = replay(pl, t, comp).time;
  EXPECT_GT(slowCompute, 1.05 * base);
  EXPECT_LT(slowCompute, 4.0 * base);
}

TEST(Replay, RefusesRunawaySliceCountsBeforeStarting) {
  const Topology t(switchOf(8));
  const auto pl = plan::allReduceRing(8, std::int64_t{1} << 28);  // 1 GiB of floats
  ReplayOptions o;
  o.sliceElems = 1;  // 8 ranks x 28 ops x 2^25 slices: 7.5e9 op-slices
  EXPECT_THROW(replay(pl, t, o), cclab::InvalidArgument);
  o.sliceElems = 1 << 20;  // 8 x 28 x 32 op-slices: runs
  EXPECT_GT(replay(pl, t, o).time, 0);
}

TEST(Replay, StragglerLinkFactorSlowsBothDirectionsOfItsLinks) {
  const int p = 6;
  const Topology t(switchOf(p, 0.5, 10));
  const auto pl = plan::allReduceRing(p, 3001);
  ReplayOptions byStraggler;
  byStraggler.stragglers = {Straggler{.rank = 2, .linkFactor = 3.0}};
  ReplayOptions byResource;
  byResource.resourceSlowdown.assign(t.resources().size(), 1.0);
  for (int id : t.rankLinks(2)) byResource.resourceSlowdown[static_cast<std::size_t>(id)] = 3.0;
  const Micros slow = replay(pl, t, byStraggler).time;
  EXPECT_DOUBLE_EQ(slow, replay(pl, t, byResource).time);
  EXPECT_GT(slow, replay(pl, t).time);
  // A straggler on a rank the plan does not have changes nothing.
  ReplayOptions outside;
  outside.stragglers = {Straggler{.rank = p + 3, .startDelay = std::chrono::seconds(1), .linkFactor = 5.0}};
  EXPECT_DOUBLE_EQ(replay(pl, t, outside).time, replay(pl, t).time);
}

TEST(Replay, TraceAndUtilisation) {
  const Topology t(*findPreset("dgx-h100"));
  ReplayOptions o;
  o.trace = true;
  const auto r = replay(plan::allReduceRing(8, 1 << 20), t, o);
  EXPECT_FALSE(r.trace.empty());
  for (std::size_t i = 0; i < r.busy.size(); ++i) EXPECT_LE(r.busy[i], r.time * (1 + 1e-12));
  const auto path = std::filesystem::temp_directory_path() / "cclab_sim_trace_test.json";
  writeChromeTrace(r, t, path.string());
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["traceEvents"].size(), r.trace.size() + 2);
  std::filesystem::remove(path);
}

// traceEventBound is an upper bound of what a replay records, for every generator, with channels
// sharing a rank's compute and phase deps (hier), and a trace past options.traceLimit is refused before
// the run, naming the bound and the limit (cclab-sim --trace had no bound: 4.3 GB to write 230 MB).
TEST(Replay, TheTraceBoundHoldsAndATracePastTheLimitIsRefused) {
  const Topology t(*findPreset("cluster"));
  const plan::PlanShape shapes[] = {{.channels = 1, .ranksPerNode = 8}, {.channels = 4, .ranksPerNode = 8}};
  int checked = 0;
  for (const Collective c : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::Broadcast, Collective::Reduce})
    for (const Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::DoubleBinaryTree, Algorithm::HalvingDoubling, Algorithm::Chain,
                              Algorithm::RecursiveDoubling, Algorithm::Hierarchical, Algorithm::OneShot, Algorithm::TwoShot, Algorithm::FlatTree})
      for (const plan::PlanShape& sh : shapes) {
        if (!plan::hasGenerator(c, a)) continue;
        const plan::Plan pl = plan::makePlan(c, a, 16, std::int64_t{1} << 20, 0, sh);
        ReplayOptions o;
        o.trace = true;
        const std::int64_t bound = traceEventBound(plan::PlanOpSource(pl), o);
        const ReplayResult r = replay(pl, t, o);
        EXPECT_FALSE(r.traceTruncated);
        EXPECT_LE(static_cast<std::int64_t>(r.trace.size()), bound) << plan::name(c) << " " << plan::name(a) << " " << sh.channels;
        EXPECT_LE(bound, 4 * static_cast<std::int64_t>(r.trace.size()) + 16 * 4 * pl.nphases) << "a loose bound refuses traces that fit";
        ++checked;
      }
  EXPECT_GT(checked, 20);
  ReplayOptions small;
  small.trace = true;
  small.traceLimit = 100;
  try {
    (void)replay(plan::allReduceRing(8, 1 << 20), t, small);
    ADD_FAILURE() << "a trace past the limit was recorded";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("more than the limit of 100"), std::string::npos) << e.what();
  }
  small.trace = false;
  EXPECT_NO_THROW((void)replay(plan::allReduceRing(8, 1 << 20), t, small)) << "the limit is the trace's only";
}

TEST(Replay, AutoSliceMatchesAnalyticRule) {
  for (auto [c, a] : {std::pair{Collective::AllReduce, Algorithm::Ring}, std::pair{Collective::AllReduce, Algorithm::Tree},
                      std::pair{Collective::AllReduce, Algorithm::DoubleBinaryTree},
                      std::pair{Collective::AllReduce, Algorithm::HalvingDoubling},
                      std::pair{Collective::AllGather, Algorithm::Ring}, std::pair{Collective::Broadcast, Algorithm::Tree}})
    for (int p : {1, 2, 6, 8})
      for (std::int64_t count : {std::int64_t{10}, std::int64_t{1} << 20, std::int64_t{3} << 24}) {
        const auto pl = plan::makePlan(c, a, p, count);
        EXPECT_EQ(autoSliceElems(pl, 4), autoSliceElems(c, a, p, count, 4)) << plan::name(a) << " p=" << p << " n=" << count;
      }
  // The ReduceAll plans and hier (its pieces depend on the ranks per node).
  for (Algorithm a : {Algorithm::OneShot, Algorithm::TwoShot, Algorithm::Hierarchical})
    for (auto [p, g] : {std::pair{1, 0}, std::pair{6, 3}, std::pair{8, 4}, std::pair{16, 8}, std::pair{8, 0}})
      for (std::int64_t count : {std::int64_t{10}, std::int64_t{1} << 20, std::int64_t{3} << 24}) {
        const auto pl = plan::makePlan(Collective::AllReduce, a, p, count, 0, {1, g});
        EXPECT_EQ(autoSliceElems(pl, 4), autoSliceElems(Collective::AllReduce, a, p, count, 4, g))
            << plan::name(a) << " p=" << p << " g=" << g << " n=" << count;
      }
}

TEST(Replay, DeadlockAndSizeErrors) {
  plan::Plan pl;
  pl.nranks = 2;
  pl.count = 4;
  pl.ranks.resize(2);
  pl.ranks[1].push_back({plan::OpKind::Recv, 0, 0, {}, {plan::Buf::Output, 0, 4}});
  const Topology t(switchOf(2));
  EXPECT_THROW(replay(pl, t), std::runtime_error);
  EXPECT_THROW(replay(plan::allReduceRing(4, 16), t), cclab::InvalidArgument);
}

TEST(Replay, ManyRanksStaysExact) {
  // 512 ranks, ring, a switch: exact against the closed form (a scalability smoke test, not a timing).
  const int p = 512;
  TopologySpec s = switchOf(p, 0.5, 100);
  const Topology t(s);
  const std::int64_t count = std::int64_t{p} * 256;
  ReplayOptions o;
  o.sliceElems = -1;
  const Micros closed = predict({Collective::AllReduce, Algorithm::Ring, p, count, 4, 0},
                                {1.0, inverseBandwidth(100), 0, 0});
  EXPECT_NEAR(replay(plan::allReduceRing(p, count), t, o).time, closed, 1e-9 * closed);
}

// ReduceAll waits for the slice of every peer: one late rank delays every other rank by its delay
// plus one message, and each rank pays γ for p-1 received vectors.
TEST(Replay, ReduceAllWaitsForEveryPeerAndReducesPMinusOneVectors) {
  const int p = 4;
  TopologySpec s = switchOf(p, 0.5, 10);
  s.kind = TopologyKind::FullyConnected;  // one link per pair: no sharing of a rank's port
  s.compute = {5, 20, 0};
  const Topology t(s);
  const std::int64_t count = 2500;  // 10 KB: 1 µs on a link, 2 µs to reduce, 0.5 µs to copy
  const Micros delay = 100;
  ReplayOptions o;
  o.sliceElems = -1;
  o.stragglers = {Straggler{.rank = 2, .startDelay = std::chrono::microseconds(100)}};
  const auto r = replay(plan::makePlan(Collective::AllReduce, Algorithm::OneShot, p, count), t, o);
  const Micros reduceAll = (p - 1) * 2.0, copy = 0.5;
  for (int q = 0; q < p; ++q)
    EXPECT_NEAR(r.finish[q], delay + (q == 2 ? 0.0 : 0.5 + 1.0) + reduceAll + copy, 1e-9) << q;
}

// The ring and hier rules (plan::makeOpSource) replay exactly as the materialized plan: same times,
// bit for bit, per rank and per resource, with slicing, channels, node orders and stragglers.
TEST(Replay, RuleSourcesReplayBitForBitAsTheirPlans) {
  struct Case {
    Algorithm a;
    int p;
    std::int64_t count;
    plan::PlanShape shape;
    std::int64_t slice;
  };
  const TopologySpec cluster = resized(*findPreset("cluster"), 0, 4, 4);
  int runs = 0;
  for (const Case& c : {Case{Algorithm::Ring, 7, 100003, {1, 0}, 0}, Case{Algorithm::Ring, 16, 4099, {2, 4}, 100},
                        Case{Algorithm::Ring, 16, 11, {3, 4}, 0}, Case{Algorithm::Ring, 1, 100, {2, 0}, 0},
                        Case{Algorithm::Hierarchical, 16, 1 << 20, {1, 4}, 0}, Case{Algorithm::Hierarchical, 16, 5003, {2, 4}, 64},
                        Case{Algorithm::Hierarchical, 16, 7, {1, 2}, -1}, Case{Algorithm::Hierarchical, 16, 999, {2, 0}, 10}})
    for (const TopologySpec& spec : {switchOf(c.p, 0.7, 25), cluster})
      for (bool strag : {false, true}) {
        if (spec.ranks != c.p && spec.kind == TopologyKind::Cluster) continue;
        const Topology t(spec);
        ReplayOptions o;
        o.sliceElems = c.slice;
        if (strag) o.stragglers = {Straggler{.rank = c.p / 2, .startDelay = std::chrono::microseconds(3), .computeFactor = 2.5, .linkFactor = 1.5}};
        const auto plan = plan::makePlan(Collective::AllReduce, c.a, c.p, c.count, 0, c.shape);
        const auto rule = plan::makeOpSource(Collective::AllReduce, c.a, c.p, c.count, 0, c.shape);
        ASSERT_EQ(dynamic_cast<const plan::PlanOpSource*>(rule.get()), nullptr);
        const ReplayResult want = replay(plan, t, o), got = replay(*rule, t, o);
        const std::string what = std::string(plan::name(c.a)) + " p=" + std::to_string(c.p) + " " + spec.name;
        EXPECT_EQ(got.time, want.time) << what;
        EXPECT_EQ(got.finish, want.finish) << what;
        EXPECT_EQ(got.busy, want.busy) << what;
        EXPECT_EQ(got.bytes, want.bytes) << what;
        EXPECT_EQ(got.steps, want.steps) << what;
        EXPECT_EQ(got.sliceElems, want.sliceElems) << what;
        if (c.p > 1) {
          EXPECT_GT(want.time, 0) << what;  // p = 1 is a copy, free on these topologies
        }
        ++runs;
      }
  EXPECT_GE(runs, 16);
}

// Runaways are refused before the replay starts, naming the limit, also for rule sources (whose
// op-slices are counted in closed form).
TEST(Replay, RuleSourcesAreRefusedPastTheLimits) {
  const Topology t(switchOf(8));
  const auto big = plan::makeOpSource(Collective::AllReduce, Algorithm::Ring, 8, std::int64_t{1} << 28);
  ReplayOptions o;
  o.sliceElems = 1;  // 7.5e9 op-slices
  try {
    replay(*big, t, o);
    FAIL() << "ran 7.5e9 op-slices";
  } catch (const cclab::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(kMaxReplayOpSlices)), std::string::npos) << e.what();
  }
  const int tooMany = kMaxReplayRanks + 1;
  const Topology wide(switchOf(tooMany));
  const auto ring = plan::makeOpSource(Collective::AllReduce, Algorithm::Ring, tooMany, 1 << 20);
  try {
    replay(*ring, wide);
    FAIL() << "replayed " << tooMany << " ranks";
  } catch (const cclab::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(kMaxReplayRanks)), std::string::npos) << e.what();
  }
}

// The op-slice limit can be raised on purpose (ReplayOptions::maxOpSlices), never past
// kMaxReplayOpSlicesRaised; a plan one op-slice over the limit is refused, one at it runs.
TEST(Replay, OpSliceLimitIsExactAndRaisable) {
  const Topology t(switchOf(8));
  const auto ring = plan::makeOpSource(Collective::AllReduce, Algorithm::Ring, 8, 100003);
  ReplayOptions o;
  o.sliceElems = 1000;
  const std::int64_t n = ring->opSlices(o.sliceElems, INT64_MAX);
  o.maxOpSlices = n - 1;
  try {
    replay(*ring, t, o);
    FAIL() << "ran past the limit";
  } catch (const cclab::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(n - 1)), std::string::npos) << e.what();
  }
  o.maxOpSlices = n;
  EXPECT_EQ(replay(*ring, t, o).steps, n);
  o.maxOpSlices = kMaxReplayOpSlicesRaised + 1;
  EXPECT_THROW(replay(*ring, t, o), cclab::InvalidArgument);
  o.maxOpSlices = 0;
  EXPECT_THROW(replay(*ring, t, o), cclab::InvalidArgument);
}
