// Replay: an event-driven run of an actual Plan on a Topology.
//
// Model (docs/sim.md, "Replay model"):
//  - Each rank walks its ops in the executors' order: phase by phase, inside a phase slice-major (slice 0
//    of every op in op order, then slice 1, ...), slices of `sliceElems` elements (plan::SliceWalker, collectives/plan/slice_walk.h).
//  - A Send of a slice puts a message on the network at the rank's current time and costs the rank
//    nothing (a copy engine / the receiver moves the data). The message is a flow over its route's
//    resources (link directions, capacity-limited nodes), each shared by the flows crossing it at the
//    moment (flow_network.h; docs/sim.md, "Link model"); it arrives latency(route) after its last
//    byte crossed (cut-through). A connection's messages cross one after another (FIFO).
//  - Recv and RecvReduce wait for the matching slice (FIFO per ordered pair of ranks); RecvReduce then
//    costs the rank γ per byte, Copy costs δ per byte. Recv itself costs nothing beyond the transfer.
//    ReduceAll waits for the slice from every other rank on its channel, then costs γ·bytes·(p-1)
//    (one pass over p-1 received vectors).
//  - Each (rank, channel) is its own agent with its own clock (channels run concurrently); a rank's
//    reductions and copies take turns at its one compute (γ, δ are per rank, not per channel), in
//    the order of simulated time (an agent whose data arrives after the next queued event waits in
//    the queue until then before it takes the compute).
//  - Phase deps (plan.h, Plan::deps): an agent starts its ops of phase p once, for every dep of its
//    (channel, p), the rank's agent of afterChannel is done or stands at an op of a later phase than
//    afterPhase (plan::PhaseGates, plan::finishedThrough), at the time that agent passed afterPhase;
//    until then it waits, and is woken when the other agent passes it. An unmet dep is a deadlock.
//  - Protocols (protocol.h): where the topology enables LL (TopologySpec::llProtocol), every message of
//    the call takes one protocol: LL (one traversal, resources held 1/kLLEfficiency as long) or Simple
//    (three traversals, full bandwidth), and LL128 where the topology enables it (kLL128LatencyTraversals,
//    held 128/120 as long). ReplayOptions::protocol forces one; auto replays the schedule under each
//    (two or three), side by side in simulated time, and reports the fastest (ties: Simple). Once one run
//    finishes the other is abandoned as soon as its clock passes that finish (it can no longer win),
//    so auto costs the winner's run plus the loser's up to the winner's finish: from little more than
//    one replay (protocols far apart) to two (close); ReplayResult::stepsAllRuns counts them. Both
//    runs' state is held at once (twice a replay's memory; the topology is shared).
//  - Start-up: every rank starts compute.launch_us late; every message that crosses a NIC waits
//    compute.proxy_us more per latency traversal (the host proxy posts it).
//  - Stragglers: a start delay, a compute and a link slowdown per rank (cclab::Straggler), and a
//    slowdown per resource.
// With no contention this makes the finish time the longest path through the plan's dependencies,
// which is what the closed forms in analytic.h compute for the same schedule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/conventions/limits.h"
#include "collectives/core/straggler.h"
#include "collectives/plan/op_source.h"
#include "collectives/plan/plan.h"
#include "sim/flow_network.h"
#include "sim/protocol.h"
#include "sim/topology.h"
#include "sim/units.h"

namespace cclab::sim {

// Auto slicing: a few slices per op, as an executor pipelines, but none smaller than NCCL's Simple
// protocol step (4 MiB buffer / 8 steps = 512 KiB, NCCL src/include/device.h NCCL_STEPS).
inline constexpr std::int64_t kAutoSlicesPerOp = 4;
inline constexpr Bytes kMinAutoSliceBytes = 512 * 1024;

// Most ranks a replay is run for (Predictor and calibrate refuse more before making the plan). The
// replay holds no ops (it asks the plan's OpSource; the ring and hier allreduces are rules), so its
// memory is per agent and connection plus the topology, per protocol run (auto runs up to three side
// by side). Its time is the op-slices, which grow as ranks^2 for a flat ring: the 8192-rank ring
// (256 MiB) is 2.7e8 op-slices per run, the 32768-rank hier (g = 8) 5.4e8; their times and peak
// memory are in docs/results/sim.md, "Scale: simulator time and memory". More ranks are the analytic
// model's job (--model analytic). A materialized plan (algorithms without a rule) still costs 72 bytes
// per op.
inline constexpr int kMaxReplayRanks = 32768;

// Most op-slices (one slice of one op on one rank) a replay runs unless told otherwise
// (ReplayOptions::maxOpSlices, `cclab-sim bench --max-op-slices`): at the 60-150 ns each it costs
// (docs/results/sim.md) 1e9 is one to three minutes. `--slice 1` on a 1 GiB ring allreduce would be
// 1e10 and more; it is refused before it starts.
inline constexpr std::int64_t kMaxReplayOpSlices = 1'000'000'000;
// The most a caller may raise that limit to (e.g. an 8192-rank ring with small slices; ten times the
// default, 10 to 30 minutes).
inline constexpr std::int64_t kMaxReplayOpSlicesRaised = 10'000'000'000;

struct ReplayOptions {
  std::int64_t elemSize = 4;     // bytes per element of the collective's data type
  std::int64_t sliceElems = 0;   // > 0: this slice size; 0: auto (see above); < 0: every op one slice
  std::int64_t maxOpSlices = kMaxReplayOpSlices;  // refuse a replay of more (at most kMaxReplayOpSlicesRaised);
                                                  // per protocol run (auto runs up to two)
  ProtocolChoice protocol = ProtocolChoice::Auto;  // forced LL or Simple: refused without ll_protocol
  LinkSharing sharing = LinkSharing::EqualShare;   // how flows share a resource (flow_network.h)
  // Slow ranks (collectives/core/straggler.h): each starts `startDelay` late, its γ and δ are multiplied
  // by `computeFactor`, and both directions of its links (Topology::rankLinks) run `linkFactor` times
  // slower. Several entries for one rank multiply (factors) and add up (delays).
  std::vector<Straggler> stragglers = {};
  std::vector<double> resourceSlowdown = {};  // per topology resource, divides its bandwidth; empty = 1
                                         // (one slow link that is not a rank's, e.g. an uplink)
  bool trace = false;                    // record a timeline (ReplayResult::trace)
  // A trace past this many events (traceEventBound, before the run) is refused: the trainer's limit,
  // a few hundred bytes of JSON each, and more than a trace viewer opens.
  std::size_t traceLimit = static_cast<std::size_t>(conventions::kMaxTraceEvents);
};

struct TraceEvent {
  std::string name;
  int pid = 0;  // 0: rank compute and waits, 1: transfers (by sender)
  int tid = 0;  // rank
  Micros start = 0, duration = 0;
  Bytes bytes = 0;
};

struct ReplayResult {
  Micros time = 0;                 // when the last rank finished
  std::vector<Micros> finish;      // per rank
  std::vector<Micros> busy;        // per resource: time it carried data
  std::vector<Bytes> bytes;        // per resource: bytes it carried
  std::int64_t sliceElems = 0;     // the slice size used (elements; 0 = whole ops)
  std::int64_t steps = 0;          // op-slices executed (the reported protocol's run)
  std::int64_t stepsAllRuns = 0;   // op-slices executed by every protocol run (auto: up to two)
  Protocol protocol = Protocol::None;  // the protocol every message took (protocol.h)
  std::vector<TraceEvent> trace;
  bool traceTruncated = false;
};

// The slice size auto slicing picks for a plan (elements; 0 = whole ops).
std::int64_t autoSliceElems(const plan::Plan& plan, std::int64_t elemSize);
std::int64_t autoSliceElems(const plan::OpSource& source, std::int64_t elemSize);

// The slice size a replay with these options takes (elements; 0 = whole ops): options.sliceElems, or
// auto slicing's.
std::int64_t resolvedSliceElems(const plan::OpSource& source, const ReplayOptions& options);

// The op-slices a replay of `source` with `options` runs at most: one run's (OpSource::opSlices at the
// slice it takes) times the protocol runs it makes (auto: one per protocol the topology allows; a loser
// stops at the winner's finish, so this is an upper bound). Past `limit` it returns limit + 1 without
// counting further. The cost the commands that replay many times add up (replay_work.h).
std::int64_t replayOpSlices(const plan::OpSource& source, const Topology& topo, const ReplayOptions& options, std::int64_t limit);

// Throws cclab::InvalidArgument if the plan's nranks exceeds the topology's or kMaxReplayRanks, or it
// would run more than kMaxReplayOpSlices op-slices, std::runtime_error if the
// plan deadlocks (a receive that is never matched).
// The replay asks the plan's ops one at a time (plan::OpSource): a Plan is replayed through
// plan::PlanOpSource; makeOpSource's rule sources replay the ring and hierarchical allreduces without
// ever holding their ops, and give the same result as the materialized plan, bit for bit.
ReplayResult replay(const plan::Plan& plan, const Topology& topo, const ReplayOptions& options = {});
ReplayResult replay(const plan::OpSource& source, const Topology& topo, const ReplayOptions& options = {});

// At most how many events one protocol run of `source` records with options.trace set, computed
// without running it (a scan of the ops at most, as the op-slice limit's check): two per op-slice (a
// rank's wait, then its reduce or copy; a Send's transfer is the one event of its op-slice), plus one
// gate wait per agent and phase of a plan with phase deps. replay() refuses a trace past
// options.traceLimit with it, before the run.
std::int64_t traceEventBound(const plan::OpSource& source, const ReplayOptions& options);

// Chrome trace JSON (chrome://tracing, Perfetto) of a replay with options.trace set. Streamed to the
// file (conventions::AtomicFileWriter): memory beyond the events themselves stays about 1 MiB.
void writeChromeTrace(const ReplayResult& result, const Topology& topo, const std::string& path);

}  // namespace cclab::sim
