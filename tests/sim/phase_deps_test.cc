// Replay of plans with phase deps between the channels of a rank (plan.h, Plan::deps), and channels
// taking turns at their rank's compute in simulated time.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "collectives/core/errors.h"
#include "sim/replay.h"
#include "sim/topology.h"
#include "tests/sim/uniform_topology.h"

using namespace cclab;
using namespace cclab::sim;
using plan::Buf;
using plan::Op;
using plan::OpKind;

namespace {

// Direct links of 1 µs and 10 GB/s: a message of c floats arrives 1 + 4c/10000 µs after its send.
Topology direct(int p, GBps reduce = 0) {
  TopologySpec s = sim::testing::uniformTopology(TopologyKind::FullyConnected, p, 1.0, 10);
  s.compute.reduceBandwidth = reduce;
  return Topology(s);
}

Op send(int peer, int phase, std::int64_t c, int channel) { return {OpKind::Send, peer, phase, {Buf::Input, 0, c}, {}, static_cast<std::uint8_t>(channel)}; }
Op recv(int peer, int phase, std::int64_t c, int channel, bool reduce = false) {
  return {reduce ? OpKind::RecvReduce : OpKind::Recv, peer, phase, reduce ? plan::Range{Buf::Input, 0, c} : plan::Range{},
          {Buf::Output, 0, c}, static_cast<std::uint8_t>(channel)};
}

plan::Plan emptyPlan(int p, int channels, int phases) {
  plan::Plan pl;
  pl.nranks = p;
  pl.count = 25000;
  pl.nchannels = channels;
  pl.nphases = phases;
  pl.ranks.resize(static_cast<std::size_t>(p));
  return pl;
}

// Rank 1's channel 0 receives 2500 floats from rank 0 in phase 0 (arriving at 2 µs); its channel 1
// receives `early` floats from rank 2 in phase 0, then sends 2500 floats back to rank 2 in phase 1,
// which the dep holds until channel 0 has passed phase 0.
plan::Plan handedOver(std::int64_t early, bool dep) {
  plan::Plan pl = emptyPlan(3, 2, 2);
  pl.ranks[0] = {send(1, 0, 2500, 0)};
  pl.ranks[1] = {recv(0, 0, 2500, 0), recv(2, 0, early, 1), send(2, 1, 2500, 1)};
  pl.ranks[2] = {send(1, 0, early, 1), recv(1, 1, 2500, 1)};
  if (dep) pl.deps = {{1, 1, 0, 0}};
  return pl;
}

ReplayOptions wholeOps() {
  ReplayOptions o;
  o.sliceElems = -1;
  return o;
}

}  // namespace

// The waiting channel starts its phase when the other passed the phase it waits for (2 µs), not
// before: whether it reached the gate before that (blocked, then woken) or after (already met).
TEST(PhaseDeps, AChannelStartsItsPhaseWhenTheOtherHasPassedItsDep) {
  const Topology t = direct(3);
  struct Case {
    std::int64_t early;  // floats rank 2 sends first: they arrive at 1 + early·4/10000 µs
    Micros start;        // when rank 1's channel 1 sends in phase 1 (its message arrives 2 µs later)
  };
  for (const Case c : {Case{1250, 2.0}, Case{5000, 3.0}, Case{2500, 2.0}}) {
    const ReplayResult with = replay(handedOver(c.early, true), t, wholeOps());
    EXPECT_DOUBLE_EQ(with.finish[2], c.start + 2.0) << c.early;
    EXPECT_DOUBLE_EQ(with.time, c.start + 2.0) << c.early;
    // Without the dep the channel runs on its own: it sends right after its own phase 0.
    const ReplayResult without = replay(handedOver(c.early, false), t, wholeOps());
    EXPECT_DOUBLE_EQ(without.finish[2], 1.0 + static_cast<double>(c.early) * 4 / 10000 + 2.0) << c.early;
  }
  // The trace shows rank 1's channel 1 waiting at the gate from its phase 0's end (1.5 µs) to 2 µs.
  ReplayOptions traced = wholeOps();
  traced.trace = true;
  const ReplayResult tr = replay(handedOver(1250, true), t, traced);
  int gateWaits = 0;
  for (const TraceEvent& e : tr.trace)
    if (e.name == "wait<-phase1") {
      ++gateWaits;
      EXPECT_EQ(e.tid, 1);
      EXPECT_DOUBLE_EQ(e.start, 1.5);
      EXPECT_DOUBLE_EQ(e.start + e.duration, 2.0);
    }
  EXPECT_EQ(gateWaits, 1);
  // The dep holds even when the channel it waits for is slower by far: 25000 floats arrive at 11 µs.
  plan::Plan slow = handedOver(1250, true);
  slow.ranks[0][0].src.count = 25000;
  slow.ranks[1][0].dst.count = 25000;
  EXPECT_DOUBLE_EQ(replay(slow, t, wholeOps()).finish[2], 13.0);
}

// A dep that can never be met is a deadlock, reported (naming the wait), not a hang.
TEST(PhaseDeps, AnUnmetDepIsReportedAsADeadlock) {
  // Rank 0's channel 1 sends in phase 1 once its channel 0 has received (phase 0) from rank 1's
  // channel 0, which sends in phase 1 once rank 1's channel 1 has received (phase 0) from rank 0's
  // channel 1: a cycle through both deps.
  plan::Plan pl = emptyPlan(2, 2, 2);
  pl.ranks[0] = {recv(1, 0, 100, 0), send(1, 1, 100, 1)};
  pl.ranks[1] = {send(0, 1, 100, 0), recv(0, 0, 100, 1)};
  pl.deps = {{0, 1, 1, 0}, {1, 1, 0, 0}};
  try {
    replay(pl, direct(2), wholeOps());
    ADD_FAILURE() << "no deadlock reported";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("deadlocks"), std::string::npos) << m;
    EXPECT_NE(m.find("waits for channel"), std::string::npos) << m;
  }
  // Without the deps the same ops run (each channel's receive is matched by the other rank's send).
  pl.deps.clear();
  EXPECT_DOUBLE_EQ(replay(pl, direct(2), wholeOps()).time, 1.04);
  // A dep on a later phase, or on a channel the plan does not have, is refused before the run.
  pl.deps = {{1, 1, 0, 1}};
  EXPECT_THROW(replay(pl, direct(2), wholeOps()), InvalidArgument);
  pl.deps = {{1, 1, 2, 0}};
  EXPECT_THROW(replay(pl, direct(2), wholeOps()), InvalidArgument);
}

// A rank's channels take turns at its compute in simulated time: channel 1's reduction of a message
// that arrives first is not queued behind channel 0's of a message that arrives later, even though
// channel 0 reached its receive first (its message was already on the way).
TEST(PhaseDeps, ChannelsReduceInTheOrderTheirDataArrives) {
  const Topology t = direct(3, 10);  // reducing 10 KB takes 1 µs
  for (const auto& [late, expected] : {std::pair{std::int64_t{5000}, 21.0}, std::pair{std::int64_t{30000}, 33.0}}) {
    // Channel 0: 25000 floats arrive at 11 µs and take 10 µs to reduce. Channel 1: `late` floats arrive
    // at 3 µs and are reduced by 5 µs, before channel 0 starts; or arrive at 13 µs, while channel 0
    // reduces, and wait for it (21 µs) and take 12 µs.
    plan::Plan pl = emptyPlan(3, 2, 1);
    pl.ranks[0] = {send(1, 0, 25000, 0)};
    pl.ranks[1] = {recv(0, 0, 25000, 0, true), recv(2, 0, late, 1, true)};
    pl.ranks[2] = {send(1, 0, late, 1)};
    EXPECT_DOUBLE_EQ(replay(pl, t, wholeOps()).finish[1], expected) << late;
  }
}
