// Replay of the plan equals the closed form of the same schedule on uniform topologies.
#include <gtest/gtest.h>

#include <bit>

#include <cmath>

#include "sim/analytic.h"
#include "sim/effective_params.h"
#include "sim/protocol.h"
#include "sim/replay.h"
#include "sim/topology.h"

using namespace cclab;
using namespace cclab::sim;
using plan::Algorithm;
using plan::Collective;

namespace {

constexpr double kRel = 1e-9;
constexpr Micros kLatency = 1.5;
constexpr GBps kLink = 10, kReduce = 7, kCopy = 13;

// The textbook model: a direct link between every pair, the same α and β on every message.
TopologySpec uniform(int p) {
  TopologySpec s;
  s.name = "uniform";
  s.kind = TopologyKind::FullyConnected;
  s.ranks = p;
  s.classes["link"] = {kLatency, kLink};
  s.compute = {kReduce, kCopy, 0};
  return s;
}

CostParams uniformParams() { return {kLatency, inverseBandwidth(kLink), inverseBandwidth(kReduce), inverseBandwidth(kCopy)}; }

struct Case {
  Collective c;
  Algorithm a;
  bool exactWhenSliced;  // is the closed form exact with several slices per op?
};

const Case kCases[] = {
    {Collective::AllReduce, Algorithm::Ring, true},          {Collective::AllReduce, Algorithm::FlatTree, true},
    {Collective::AllReduce, Algorithm::DoubleBinaryTree, true}, {Collective::AllReduce, Algorithm::HalvingDoubling, true},
    {Collective::AllReduce, Algorithm::RecursiveDoubling, false},
    {Collective::AllReduce, Algorithm::OneShot, true},       {Collective::AllReduce, Algorithm::TwoShot, true},
    {Collective::ReduceScatter, Algorithm::Ring, true},      {Collective::AllGather, Algorithm::Ring, true},
    {Collective::Broadcast, Algorithm::Chain, true},         {Collective::Broadcast, Algorithm::Tree, true},
    {Collective::Reduce, Algorithm::Chain, true},            {Collective::Reduce, Algorithm::Tree, true},
};

std::string label(const Case& k, int p) {
  return std::string(plan::name(k.c)) + "/" + std::string(plan::name(k.a)) + " p=" + std::to_string(p);
}

// A count that splits evenly into every chunk, block and slice the generators and tests use.
std::int64_t evenCount(int p) { return std::int64_t{p} * 64 * 16; }

}  // namespace

TEST(ClosedForm, ReplayEqualsClosedFormOneSlicePerOp) {
  for (const auto& k : kCases)
    for (int p = 2; p <= 64; ++p) {
      const Topology topo(uniform(p));
      const std::int64_t count = evenCount(p);
      const auto pl = plan::makePlan(k.c, k.a, p, count, p / 3);
      ReplayOptions o;
      o.sliceElems = -1;
      const Micros replayed = replay(pl, topo, o).time;
      const Micros closed = predict({k.c, k.a, p, count, 4, 0}, uniformParams());
      if (k.a == Algorithm::RecursiveDoubling && !std::has_single_bit(static_cast<unsigned>(p))) {
        // The closed form charges the fold before every step; ranks that did not fold overlap it.
        EXPECT_LE(replayed, closed * (1 + kRel)) << label(k, p);
        EXPECT_GE(replayed, 0.5 * closed) << label(k, p);
        continue;
      }
      EXPECT_NEAR(replayed, closed, kRel * closed) << label(k, p);
    }
}

TEST(ClosedForm, ReplayEqualsClosedFormWithSlices) {
  for (const auto& k : kCases) {
    if (!k.exactWhenSliced) continue;
    // One-shot and two-shot send p(p-1) messages per slice round: up to 22 ranks keeps this test short.
    const bool direct = k.a == Algorithm::OneShot || k.a == Algorithm::TwoShot;
    for (int p = 2; p <= (direct ? 22 : 64); p += (p < 8 ? 1 : 7)) {
      const Topology topo(uniform(p));
      const std::int64_t count = evenCount(p);
      for (std::int64_t slice : {std::int64_t{16}, std::int64_t{64}}) {
        const auto pl = plan::makePlan(k.c, k.a, p, count, 0);
        ReplayOptions o;
        o.sliceElems = slice;
        const Micros replayed = replay(pl, topo, o).time;
        const Micros closed = predict({k.c, k.a, p, count, 4, slice}, uniformParams());
        EXPECT_NEAR(replayed, closed, kRel * closed) << label(k, p) << " slice " << slice;
      }
    }
  }
}

// The double binary tree is two independent trees on half the data each (analytic_tree.cc). They
// can only delay each other where a rank reduces for both (its compute is shared across channels) or
// two tree edges share a link direction. Neither lands on a critical path of these trees: with
// reduction 5x slower than the wire (compute-bound, the worst case for the first) the closed form
// is still exact, one slice or several, odd p included.
TEST(ClosedForm, DoubleBinaryTreeIsTheTreeOnHalfTheData) {
  for (int p = 2; p <= 65; ++p) {
    TopologySpec s = uniform(p);
    s.compute.reduceBandwidth = kLink / 5;
    const Topology topo(s);
    CostParams k = uniformParams();
    k.gamma = inverseBandwidth(kLink / 5);
    const std::int64_t count = evenCount(p) * 8;
    for (std::int64_t rounds : {1, 2, 4, 16}) {
      const std::int64_t slice = rounds == 1 ? -1 : count / 2 / rounds;
      const auto pl = plan::makePlan(Collective::AllReduce, Algorithm::DoubleBinaryTree, p, count);
      ReplayOptions o;
      o.sliceElems = slice;
      const Micros replayed = replay(pl, topo, o).time;
      const Micros closed = predict({Collective::AllReduce, Algorithm::DoubleBinaryTree, p, count, 4, slice}, k);
      EXPECT_NEAR(replayed, closed, kRel * closed) << "p=" << p << " rounds " << rounds;
    }
  }
}

// Ring allreduce's bandwidth term is the lower bound 2(p-1)/p · n/B, for any slicing.
TEST(ClosedForm, RingBandwidthTermIsTheLowerBound) {
  for (int p : {2, 3, 8, 31, 64}) {
    TopologySpec s = uniform(p);
    s.classes["link"].latency = 0;
    s.compute = {};
    const Topology topo(s);
    const std::int64_t count = evenCount(p) * 4;
    const double n = static_cast<double>(count * 4);
    const double bound = 2.0 * (p - 1) / p * n * inverseBandwidth(kLink);
    for (std::int64_t slice : {std::int64_t{-1}, std::int64_t{32}}) {
      ReplayOptions o;
      o.sliceElems = slice;
      EXPECT_NEAR(replay(plan::allReduceRing(p, count), topo, o).time, bound, kRel * bound) << p;
    }
  }
}

// On a switch (one port per rank, as NVSwitch) the ring has no contention either: still exact.
TEST(ClosedForm, RingOnASwitchMatches) {
  for (int p : {2, 8, 64, 256}) {
    TopologySpec s = uniform(p);
    s.kind = TopologyKind::Switch;
    const Topology topo(s);
    const std::int64_t count = evenCount(p);
    const CostParams k = effectiveParams(topo, Collective::AllReduce, Algorithm::Ring, p);
    EXPECT_NEAR(k.alpha, 2 * kLatency, 1e-12);
    ReplayOptions o;
    o.sliceElems = -1;
    const Micros replayed = replay(plan::allReduceRing(p, count), topo, o).time;
    EXPECT_NEAR(replayed, predict({Collective::AllReduce, Algorithm::Ring, p, count, 4, 0}, k), kRel * replayed) << p;
  }
}

TEST(ClosedForm, SingleRankIsACopy) {
  for (const auto& k : kCases) {
    const Topology topo(uniform(1));
    const auto pl = plan::makePlan(k.c, k.a, 1, 1000, 0);
    const Micros closed = predict({k.c, k.a, 1, 1000, 4, 0}, uniformParams());
    EXPECT_NEAR(replay(pl, topo).time, closed, kRel * closed) << label(k, 1);
  }
}

// The hier plan (allreduce_hierarchical.cc) against its pipelined closed form (analytic_hierarchical.cc)
// on the textbook topology: g ranks per node, N nodes, whole ops and slices; N = 1 is the flat ring.
// The two lanes of a rank take turns at its one compute (γ), which the closed form does not count:
// with B >= 2 blocks (both lanes reduce in one stage) it is exact where reducing is free, and with
// one block (no stage has both lanes) at any γ.
TEST(ClosedForm, HierarchicalPlanEqualsItsClosedForm) {
  int pipelined = 0;
  for (int g : {2, 3, 4, 8})
    for (int nodes : {1, 2, 3, 5}) {
      const int p = g * nodes;
      for (bool freeReduce : {true, false}) {
        TopologySpec spec = uniform(p);
        CostParams k = uniformParams();
        if (freeReduce) spec.compute.reduceBandwidth = 0, k.gamma = 0;
        const Topology topo(spec);
        // One block (a piece of 1024 elements per rank: below two of kMinPieceElems), and the most.
        for (std::int64_t count : {std::int64_t{p} * 1024, evenCount(p) * 1024}) {
          const int blocks = nodes > 1 ? plan::hierarchicalBlocks(count, g, nodes) : 1;
          if (blocks > 1 && !freeReduce) continue;
          pipelined += blocks > 1;
          const auto pl = plan::makePlan(Collective::AllReduce, Algorithm::Hierarchical, p, count, 0, {1, g});
          for (std::int64_t slice : {std::int64_t{-1}, std::int64_t{64}, std::int64_t{256}}) {
            ReplayOptions o;
            o.sliceElems = slice;
            const Micros replayed = replay(pl, topo, o).time;
            Schedule sc{Collective::AllReduce, Algorithm::Hierarchical, p, count, 4, slice};
            sc.ranksPerNode = g;
            const Micros closed = predict(sc, k);
            EXPECT_NEAR(replayed, closed, kRel * closed)
                << "g=" << g << " nodes=" << nodes << " count " << count << " blocks " << blocks << " slice " << slice
                << " free reduce " << freeReduce;
          }
        }
      }
    }
  EXPECT_GT(pipelined, 0);
  // One node: the ring allreduce.
  Schedule one{Collective::AllReduce, Algorithm::Hierarchical, 8, evenCount(8), 4, -1};
  one.ranksPerNode = 8;
  EXPECT_NEAR(predict(one, uniformParams()), predict({Collective::AllReduce, Algorithm::Ring, 8, evenCount(8), 4, -1}, uniformParams()), 1e-9);
}

// With the protocols on (ll_protocol), every message of a call takes one protocol (sim/protocol.h):
// forced LL is the textbook model with β / kLLEfficiency, forced Simple with α · 3, so the replay
// still equals the closed form under each, and auto (the faster run) equals the lower closed form and
// names its protocol. Two sizes per case: one where LL wins, one where Simple does.
TEST(ClosedForm, ReplayEqualsClosedFormUnderEachProtocol) {
  for (const auto& k : kCases)
    for (int p : {2, 3, 5, 8, 13}) {
      if (k.a == Algorithm::RecursiveDoubling && !std::has_single_bit(static_cast<unsigned>(p))) continue;  // a bound only
      TopologySpec s = uniform(p);
      s.llProtocol = true;
      const Topology topo(s);
      for (std::int64_t count : {evenCount(p), evenCount(p) * 64})
        for (std::int64_t slice : {std::int64_t{-1}, std::int64_t{64}}) {
          if (slice > 0 && !k.exactWhenSliced) continue;
          const auto pl = plan::makePlan(k.c, k.a, p, count, p / 3);
          const Schedule sc{k.c, k.a, p, count, 4, slice};
          const Micros ll = predict(sc, withProtocol(uniformParams(), Protocol::LL));
          const Micros simple = predict(sc, withProtocol(uniformParams(), Protocol::Simple));
          for (ProtocolChoice choice : {ProtocolChoice::LL, ProtocolChoice::Simple, ProtocolChoice::Auto}) {
            ReplayOptions o;
            o.sliceElems = slice;
            o.protocol = choice;
            const ReplayResult r = replay(pl, topo, o);
            const Micros closed = choice == ProtocolChoice::LL ? ll : choice == ProtocolChoice::Simple ? simple : std::min(ll, simple);
            const std::string what = label(k, p) + " count " + std::to_string(count) + " slice " + std::to_string(slice) + " " +
                                     std::string(name(choice));
            EXPECT_NEAR(r.time, closed, kRel * closed) << what;
            if (std::abs(ll - simple) > 1e-6 * closed) {  // a clear winner: both models name the same one
              EXPECT_EQ(r.protocol, choice == ProtocolChoice::LL ? Protocol::LL
                                    : choice == ProtocolChoice::Simple || simple < ll ? Protocol::Simple : Protocol::LL)
                  << what;
            }
          }
        }
    }
  // The hier plan too (g ranks per node, whole ops and slices; pipelined over blocks with free
  // reduction, as in HierarchicalPlanEqualsItsClosedForm).
  for (int g : {2, 4})
    for (int nodes : {2, 3}) {
      const int p = g * nodes;
      for (std::int64_t count : {evenCount(p), evenCount(p) * 64}) {
        TopologySpec s = uniform(p);
        s.llProtocol = true;
        CostParams k = uniformParams();
        if (plan::hierarchicalBlocks(count, g, nodes) > 1) s.compute.reduceBandwidth = 0, k.gamma = 0;
        const Topology topo(s);
        const auto pl = plan::makePlan(Collective::AllReduce, Algorithm::Hierarchical, p, count, 0, {1, g});
        for (std::int64_t slice : {std::int64_t{-1}, std::int64_t{256}}) {
          Schedule sc{Collective::AllReduce, Algorithm::Hierarchical, p, count, 4, slice};
          sc.ranksPerNode = g;
          const Micros ll = predict(sc, withProtocol(k, Protocol::LL));
          const Micros simple = predict(sc, withProtocol(k, Protocol::Simple));
          for (ProtocolChoice choice : {ProtocolChoice::LL, ProtocolChoice::Simple, ProtocolChoice::Auto}) {
            ReplayOptions o;
            o.sliceElems = slice;
            o.protocol = choice;
            const Micros closed = choice == ProtocolChoice::LL ? ll : choice == ProtocolChoice::Simple ? simple : std::min(ll, simple);
            EXPECT_NEAR(replay(pl, topo, o).time, closed, kRel * closed)
                << "hier g=" << g << " nodes=" << nodes << " count " << count << " slice " << slice << " " << name(choice);
          }
        }
      }
    }
}

TEST(ClosedForm, PredictRejectsMissingGenerators) {
  EXPECT_THROW(predict({Collective::ReduceScatter, Algorithm::Tree, 4, 100, 4, 0}, uniformParams()), cclab::InvalidArgument);
}
