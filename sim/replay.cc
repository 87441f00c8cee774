// Event-driven replay of a plan; the model is described in replay.h.
#include "sim/replay.h"

#include "collectives/conventions/output_file.h"
#include "collectives/core/errors.h"

// GCC 12 reports a false -Wrestrict inside std::string concatenation at -O2 (GCC bug 105651).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <set>
#include <span>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectives/plan/phase_deps.h"
#include "collectives/plan/slice_walk.h"
#include "sim/event_queue.h"
#include "sim/flow_network.h"

namespace cclab::sim {
namespace {

using plan::OpKind;

// An agent walks one channel of one rank: its ops asked one at a time from the plan's OpSource
// (collectives/plan/op_source.h), so a replay holds O(ranks x channels + connections), never the ops.
using Cursor = plan::SliceWalker<plan::Op, plan::SourceOps>;

// A FIFO connection between an ordered pair of ranks on one plan channel, with its route. Its
// messages cross the network one after another (a flow of the FlowNetwork at a time, its id the
// connection's); the ones sent while one is on its way wait in `queued`.
struct Connection {
  int src = 0, dst = 0;
  int routeBegin = 0, routeEnd = 0;  // into Engine::routeRes_
  Micros latency = 0;
  std::vector<Micros> arrivals;  // delivered: arrival times, consumed from head
  std::size_t head = 0;
  int waiting = -1;  // agent blocked on this connection
  bool sending = false;     // a message is on the network now
  Micros sentAt = 0;        // when it started (trace)
  Bytes sendingBytes = 0;
  std::vector<Bytes> queued;  // sent, waiting for the one on the network, consumed from queuedHead
  std::size_t queuedHead = 0;

  [[nodiscard]] bool empty() const { return head == arrivals.size(); }
  [[nodiscard]] Micros front() const { return arrivals[head]; }
  Micros pop() {
    const Micros a = arrivals[head++];
    if (head == arrivals.size()) {
      arrivals.clear();
      head = 0;
    }
    return a;
  }
};

// "send->3": built with append, not operator+ (GCC 12 warns falsely on "literal" + std::string&&).
std::string labelled(const char* prefix, int rank) {
  std::string s(prefix);
  s.append(std::to_string(rank));
  return s;
}

class Engine {
 public:
  // A run with every message on `protocol`: begin(), advance() until !running(), then finish() (or
  // run() for all three).
  Engine(const plan::OpSource& source, const Topology& topo, const ReplayOptions& opt, Protocol protocol)
      : source_(source), info_(source.info()), topo_(topo), opt_(opt), cost_(costOf(protocol)), net_({}, routeRes_, opt.sharing, FlowSchedule::Caller) {
    result_.protocol = protocol;
  }

  ReplayResult run() {
    begin();
    advance(std::numeric_limits<std::int64_t>::max(), std::numeric_limits<Micros>::infinity());
    return finish();
  }

  // Checks the limits, makes every connection and agent.
  void begin() {
    const int n = info_.nranks;
    if (n > kMaxReplayRanks)
      throw InvalidArgument("replay: " + std::to_string(n) + " ranks is more than a replay runs (" +
                            std::to_string(kMaxReplayRanks) + "); use the analytic model");
    if (n > topo_.nranks())
      throw InvalidArgument("replay: plan has " + std::to_string(n) + " ranks but topology '" +
                                  topo_.spec().name + "' has " + std::to_string(topo_.nranks()));
    result_.sliceElems = resolvedSliceElems(source_, opt_);
    slice_ = result_.sliceElems;
    checkSize();
    if (opt_.trace)
      conventions::requireAtMost(traceEventBound(source_, opt_), static_cast<std::int64_t>(opt_.traceLimit),
                                 "replay: the trace of this plan (events, at most 2 per op-slice)",
                                 "the trace limit; trace a smaller size or fewer ranks");
    setupResources();
    seed();
  }

  // Runs up to `events` events, and after the first none later than `until`. Stops (abandoned) when
  // the next one is after `cutoff`: an agent resumes after it, so the run would finish after it.
  void advance(std::int64_t events, Micros cutoff, Micros until = std::numeric_limits<Micros>::infinity()) {
    for (std::int64_t i = 0; i < events && !queue_.empty(); ++i) {
      const auto [t, a] = queue_.top();
      if (a < 0 && !net_.due(flowOf(a), t)) {  // a flow whose rate changed since, or that ended
        queue_.pop();
        --i;
        continue;
      }
      if (t > cutoff) {
        abandoned_ = true;
        return;
      }
      if (i > 0 && t > until) return;
      queue_.pop();
      if (a < 0) {
        delivered(flowOf(a));
        continue;
      }
      time_[a] = std::max(time_[a], t);
      runAgent(a);
    }
  }

  [[nodiscard]] bool running() const { return !queue_.empty() && !abandoned_; }
  [[nodiscard]] bool abandoned() const { return abandoned_; }
  // Simulated time of the next event (infinity when none is left).
  [[nodiscard]] Micros clock() const { return queue_.empty() ? std::numeric_limits<Micros>::infinity() : queue_.top().first; }
  [[nodiscard]] std::int64_t steps() const { return result_.steps; }

  // The result of a run that is not running any more; throws when it deadlocked.
  ReplayResult finish() {
    const int n = info_.nranks;
    std::set<int> blocked;
    for (int a = 0; a < static_cast<int>(agentRank_.size()); ++a)
      if (!done(a)) blocked.insert(agentRank_[a]);
    std::string stuck;
    for (int r : blocked) stuck += " " + std::to_string(r);
    if (!stuck.empty())
      throw std::runtime_error("replay: plan " + std::string(plan::name(info_.collective)) + "/" +
                               std::string(plan::name(info_.algorithm)) + " deadlocks; blocked ranks:" + stuck + depWaits());
    result_.time = n > 0 ? *std::max_element(result_.finish.begin(), result_.finish.end()) : 0.0;
    return std::move(result_);
  }

 private:
  // The connection (channel, src, dst), made with its route on first use (setupResources makes them all).
  int connectionId(int channel, int src, int dst) {
    const std::int64_t n = info_.nranks;
    const std::int64_t key = (std::int64_t{channel} * n + src) * n + dst;
    auto [it, inserted] = ids_.try_emplace(key, static_cast<int>(conns_.size()));
    if (inserted) {
      Connection c;
      c.src = src;
      c.dst = dst;
      const Route route = topo_.routesFrom(topo_.rankNode(src), {dst}).front();
      c.routeBegin = static_cast<int>(routeRes_.size());
      c.latency = route.latency;
      bool nic = false;
      for (int id : route.resources) {
        routeRes_.push_back(id);
        nic = nic || topo_.isNic(id);
      }
      // A message that crosses a NIC waits for the host proxy to post it (compute.proxy_us), once per
      // traversal of the protocol like the route's latency (NCCL's tuner charges its net overhead 3x on
      // Simple: src/graph/tuning.cc, getNetOverhead and its use).
      if (nic) c.latency += topo_.spec().compute.proxyLatency;
      c.routeEnd = static_cast<int>(routeRes_.size());
      conns_.push_back(std::move(c));
    }
    return it->second;
  }

  // The connection of a Send, Recv or RecvReduce of agent a (rank r); the agent remembers the few it
  // has used (a linear scan beats a hash for a rank's handful of peers).
  int connect(int a, int r, const plan::Op& op) {
    const bool out = op.kind == OpKind::Send;
    for (const auto& k : known_[static_cast<std::size_t>(a)])
      if (k.peer == op.peer && k.out == out) return k.id;
    if (op.peer < 0 || op.peer >= info_.nranks || op.peer == r)
      throw InvalidArgument("replay: rank " + std::to_string(r) + " has an op with bad peer " + std::to_string(op.peer));
    const int id = connectionId(op.channel, out ? r : op.peer, out ? op.peer : r);
    known_[static_cast<std::size_t>(a)].push_back({op.peer, out, id});
    return id;
  }

  // A ReduceAll's incoming connections, one from every other rank on the agent's channel (made once
  // per agent).
  const std::vector<int>& gatherOf(int a, int r, int channel) {
    auto& g = gather_[static_cast<std::size_t>(a)];
    if (g.empty())
      for (int q = 0; q < info_.nranks; ++q)
        if (q != r) g.push_back(connectionId(channel, q, r));
    return g;
  }

  void checkSize() const {
    const std::int64_t limit = opt_.maxOpSlices;
    if (limit < 1 || limit > kMaxReplayOpSlicesRaised)
      throw InvalidArgument("replay: the op-slice limit must be in 1.." + std::to_string(kMaxReplayOpSlicesRaised) + ", got " +
                            std::to_string(limit));
    if (source_.opSlices(slice_, limit) <= limit) return;
    if (slice_ <= 0 || source_.opSlices(0, limit) > limit)  // whole ops already: no slice size helps
      throw InvalidArgument("replay: this plan has more than " + std::to_string(limit) + " ops over its " + std::to_string(info_.nranks) +
                            " ranks even unsliced (the limit; 1e9 is one to three minutes of replay); use fewer ranks or --model analytic");
    throw InvalidArgument("replay: the slice size " + std::to_string(slice_) + " elements cuts this plan into more than " +
                          std::to_string(limit) + " op-slices (the limit; 1e9 is one to three minutes of replay); use a larger --slice");
  }

  void setupResources() {
    const auto& res = topo_.resources();
    resBeta_.resize(res.size());
    for (std::size_t i = 0; i < res.size(); ++i) {
      const double slow = i < opt_.resourceSlowdown.size() ? opt_.resourceSlowdown[i] : 1.0;
      resBeta_[i] = inverseBandwidth(res[i].bandwidth) * slow;
    }
    for (const Straggler& s : opt_.stragglers)
      if (s.rank >= 0 && s.rank < info_.nranks)
        for (int id : topo_.rankLinks(s.rank)) resBeta_[static_cast<std::size_t>(id)] *= s.linkFactor;
    net_ = FlowNetwork(resBeta_, routeRes_, opt_.sharing, FlowSchedule::Caller);
    result_.busy.assign(res.size(), 0.0);
    result_.bytes.assign(res.size(), 0);
    // Every connection with its route, before the run. The source lists each rank's connections
    // (plan::OpSource::links).
    for (int r = 0; r < info_.nranks; ++r)
      for (const plan::PeerLink& l : source_.links(r)) {
        if (l.peer < 0 || l.peer >= info_.nranks || l.peer == r)
          throw InvalidArgument("replay: rank " + std::to_string(r) + " has an op with bad peer " + std::to_string(l.peer));
        connectionId(l.channel, l.out ? r : l.peer, l.out ? l.peer : r);
      }
  }

  [[nodiscard]] bool done(int a) const { return cursor_[a].done(); }

  // A Send of `bytes` on connection `id` at time t: it goes on the network now, or after the
  // connection's messages before it (FIFO per connection).
  void send(int id, Micros t, Bytes bytes) {
    Connection& ch = conns_[static_cast<std::size_t>(id)];
    if (ch.sending) {
      ch.queued.push_back(bytes);
      return;
    }
    startFlow(id, t, bytes);
  }

  // Puts a message on the network (flow_network.h): its bytes cross every resource of the route at the
  // rate the resources' sharing gives it. Protocol (protocol.h, one for the whole call): LL moves
  // 1/kLLEfficiency times the bytes (flags), Simple the bytes. A resource's busy time counts the time
  // the message's bytes take at its full bandwidth (busy / total = its utilisation).
  void startFlow(int id, Micros t, Bytes bytes) {
    Connection& ch = conns_[static_cast<std::size_t>(id)];
    const double volume = static_cast<double>(bytes) * cost_.stretch;
    for (int i = ch.routeBegin; i < ch.routeEnd; ++i) {
      const int r = routeRes_[static_cast<std::size_t>(i)];
      result_.busy[static_cast<std::size_t>(r)] += volume * resBeta_[static_cast<std::size_t>(r)];
      result_.bytes[static_cast<std::size_t>(r)] += bytes;
    }
    ch.sending = true;
    ch.sentAt = t;
    ch.sendingBytes = bytes;
    net_.start(id, ch.routeBegin, ch.routeEnd, volume, t);
    queueChanged();
  }

  // Flows are queued as -1 - id at their end; an entry is stale once the flow's end moved (its rate
  // changed: it is queued again) or it ended.
  static int flowOf(int entry) { return -1 - entry; }
  void queueChanged() {
    for (const int id : net_.changed()) queue_.emplace(net_.end(id), -1 - id);
    net_.changed().clear();
  }

  // Flow id's bytes have all crossed: its message arrives the route's latency later (cut-through: the
  // latency once, not per hop; Simple's three traversals, LL's one), and the connection's next
  // message goes on the network.
  void delivered(int id) {
    const Micros when = net_.end(id);
    net_.finish(id);
    queueChanged();
    Connection& ch = conns_[static_cast<std::size_t>(id)];
    const Micros arrival = when + cost_.traversals * ch.latency;
    if (opt_.trace) record(labelled("send->", ch.dst), 1, ch.src, ch.sentAt, arrival - ch.sentAt, ch.sendingBytes);
    ch.sending = false;
    ch.arrivals.push_back(arrival);
    if (ch.waiting >= 0) {
      const int w = ch.waiting;
      ch.waiting = -1;
      queue_.emplace(std::max(time_[w], arrival), w);
    }
    if (ch.queuedHead < ch.queued.size()) {
      const Bytes next = ch.queued[ch.queuedHead++];
      if (ch.queuedHead == ch.queued.size()) {
        ch.queued.clear();
        ch.queuedHead = 0;
      }
      startFlow(id, when, next);
    }
  }

  void record(std::string name, int pid, int tid, Micros start, Micros dur, Bytes bytes) {
    if (result_.trace.size() >= opt_.traceLimit) {  // never with traceEventBound checked in begin(); kept as a guard
      result_.traceTruncated = true;
      return;
    }
    result_.trace.push_back({std::move(name), pid, tid, start, dur, bytes});
  }

  // Runs agent a (one channel of one rank) from its current time until it blocks, finishes, or passes
  // the next event. A rank's channels are concurrent agents (as NCCL's channels run on separate SMs).
  void runAgent(int a) {
    if (gated_)
      runAgentAs<true>(a);
    else
      runAgentAs<false>(a);
  }

  // runAgent, compiled once for plans with phase deps and once without (no gate tests at all).
  template <bool kGated>
  void runAgentAs(int a) {
    auto& c = cursor_[a];
    const int r = agentRank_[a];
    Micros& now = time_[a];
    double slow = 1.0;
    for (const Straggler& s : opt_.stragglers)
      if (s.rank == r) slow *= s.computeFactor;
    const MicrosPerByte gamma = topo_.reduceCost() * slow, delta = topo_.copyCost() * slow;
    const bool shares = sharesCompute_[static_cast<std::size_t>(r)] != 0;
    for (;;) {
      if (done(a)) {
        result_.finish[r] = std::max(result_.finish[r], now);
        return;
      }
      const plan::Op& in = c.current();
      const int phase = in.phase;
      if (kGated && phase != gatePassed_[a]) {  // the first op of a phase: its deps (plan.h, Plan::deps)
        if (!gatesOpen(a, r, in.channel, phase, now)) return;
        gatePassed_[a] = phase;
        if (!queue_.empty() && now > queue_.top().first) {  // a dep moved its clock past the next event
          queue_.emplace(now, a);
          return;
        }
      }
      const auto [lo, hi] = c.sliceRange();
      const Bytes bytes = (hi - lo) * opt_.elemSize;
      switch (in.kind) {
        case OpKind::ReduceAll: {  // wait for this slice from every peer, then reduce p-1 of them in one pass
          const int peers = info_.nranks - 1;
          const int* conn = gatherOf(a, r, in.channel).data();
          for (int& i = gatherReady_[a]; i < peers; ++i)  // peers whose slice is here (arrivals stay until popped)
            if (conns_[conn[i]].empty()) {
              conns_[conn[i]].waiting = a;
              return;
            }
          Micros arrival = now;
          for (int i = 0; i < peers; ++i) arrival = std::max(arrival, conns_[conn[i]].front());
          if (shares && waitForCompute(a, r, arrival)) return;
          gatherReady_[a] = 0;
          for (int i = 0; i < peers; ++i) conns_[conn[i]].pop();
          const Micros d = static_cast<double>(bytes) * peers * gamma;
          if (opt_.trace && arrival > now) record("wait<-all", 0, r, now, arrival - now, 0);
          now = std::max(arrival, d > 0 ? computeFree_[r] : arrival);
          if (opt_.trace && d > 0) record("reduce-all", 0, r, now, d, bytes * peers);
          now += d;
          computeFree_[r] = now;
          break;
        }
        case OpKind::Send:
          send(connect(a, r, in), now, bytes);
          break;
        case OpKind::Copy: {
          const Micros d = static_cast<double>(bytes) * delta;
          if (d > 0) now = std::max(now, computeFree_[r]);
          if (opt_.trace && d > 0) record("copy", 0, r, now, d, bytes);
          now += d;
          computeFree_[r] = now;
          break;
        }
        case OpKind::Recv:
        case OpKind::RecvReduce: {
          Connection& ch = conns_[connect(a, r, in)];
          if (ch.empty()) {
            ch.waiting = a;
            return;
          }
          if (shares && in.kind == OpKind::RecvReduce && waitForCompute(a, r, ch.front())) return;
          const Micros arrival = ch.pop();
          if (opt_.trace && arrival > now) record(labelled("wait<-", ch.src), 0, r, now, arrival - now, 0);
          now = std::max(now, arrival);
          if (in.kind == OpKind::RecvReduce) {
            const Micros d = static_cast<double>(bytes) * gamma;
            if (d > 0) now = std::max(now, computeFree_[r]);
            if (opt_.trace && d > 0) record("reduce", 0, r, now, d, bytes);
            now += d;
            computeFree_[r] = now;
          }
          break;
        }
      }
      ++result_.steps;
      c.advance();
      if (kGated && (done(a) || c.current().phase != phase)) passPhases(a, phase, done(a) ? info_.nphases : c.current().phase, now);
      if (!queue_.empty() && now > queue_.top().first) {
        queue_.emplace(now, a);
        return;
      }
    }
  }

  // A rank's channels take turns at its compute in simulated time: an agent whose reduction would
  // start (its data arrives) after the next queued event goes back to the queue at that time first, so
  // another channel's earlier reduction is not queued behind it. Called only for ranks with several
  // agents (sharesCompute_).
  bool waitForCompute(int a, int r, Micros arrival) {
    if (queue_.empty() || arrival <= queue_.top().first) return false;
    // No need when every other agent of the rank is done or waits for a phase of this one (a phase
    // dep): none of them can take the compute before this agent has passed its phase.
    bool contended = false;
    for (int b = agentBegin_[static_cast<std::size_t>(r)]; b < agentBegin_[static_cast<std::size_t>(r) + 1] && !contended; ++b)
      contended = b != a && !done(b) && (!gated_ || waitingOn_[b] != a);
    if (!contended) return false;
    if (opt_.trace && arrival > time_[a]) record("wait", 0, r, time_[a], arrival - time_[a], 0);
    time_[a] = std::max(time_[a], arrival);
    queue_.emplace(time_[a], a);
    return true;
  }

  // For a deadlock report: the first few agents that wait on a phase dep, "; rank 0 channel 1 waits
  // for channel 0 to pass phase 2".
  [[nodiscard]] std::string depWaits() const {
    std::string out;
    int shown = 0;
    for (int a = 0; gated_ && a < static_cast<int>(agentRank_.size()) && shown < 4; ++a) {
      if (done(a)) continue;
      const plan::Op& op = cursor_[a].current();
      if (op.phase == gatePassed_[a]) continue;
      const int r = agentRank_[a];
      for (const plan::PhaseDep& d : gates_.of(op.channel, op.phase)) {
        const int b = agentOf_[static_cast<std::size_t>(r) * nch_ + static_cast<std::size_t>(d.afterChannel)];
        if (b < 0 || plan::finishedThrough(cursor_[b], d.afterPhase)) continue;
        out += "; rank " + std::to_string(r) + " channel " + std::to_string(op.channel) + " waits for channel " +
               std::to_string(d.afterChannel) + " to pass phase " + std::to_string(d.afterPhase);
        ++shown;
        break;
      }
    }
    return out;
  }

  // Phase deps (plan.h, plan/phase_deps.h): may agent a (rank r, channel ch) start its ops of `phase`?
  // Each dep is met when the rank's agent of afterChannel is done or stands at an op of a later phase
  // than afterPhase; a met dep moves a's clock to when that agent passed afterPhase (passedAt). On
  // the first unmet dep, a waits on that agent (passPhases wakes it) and the call returns false.
  bool gatesOpen(int a, int r, int ch, int phase, Micros& now) {
    const Micros before = now;
    for (const plan::PhaseDep& d : gates_.of(ch, phase)) {
      const int b = agentOf_[static_cast<std::size_t>(r) * nch_ + static_cast<std::size_t>(d.afterChannel)];
      if (b < 0) continue;  // a channel without ops on this rank: met at once
      if (!plan::finishedThrough(cursor_[b], d.afterPhase)) {
        if (opt_.trace && blockedAt_[a] < 0) blockedAt_[a] = now;  // the wait shows in the trace from here
        waitPhase_[a] = d.afterPhase;
        waitingOn_[a] = b;
        waitNext_[a] = waitHead_[b];
        waitHead_[b] = a;
        return false;
      }
      now = std::max(now, passedAt(b, d.afterPhase));
    }
    if (opt_.trace) {
      const Micros since = blockedAt_[a] >= 0 ? std::min(blockedAt_[a], before) : before;
      blockedAt_[a] = -1;
      if (now > since) record(labelled("wait<-phase", phase), 0, r, since, now - since, 0);
    }
    return true;
  }

  // When agent b finished all its ops of phases <= q (0 for phases before its first op).
  [[nodiscard]] Micros passedAt(int b, int q) const {
    if (q < 0) return 0;
    q = std::min(q, info_.nphases - 1);
    return passed_[static_cast<std::size_t>(b) * nph_ + static_cast<std::size_t>(q)];
  }

  // Agent b left its phase `from` for `to` (nphases: done) at `now`: phases from..to-1 are passed then;
  // the agents waiting on one of them are queued at their own clock or `now`, whichever is later.
  void passPhases(int b, int from, int to, Micros now) {
    for (int q = std::max(from, 0); q < std::min(to, info_.nphases); ++q) passed_[static_cast<std::size_t>(b) * nph_ + static_cast<std::size_t>(q)] = now;
    int* link = &waitHead_[b];
    while (*link >= 0) {
      const int w = *link;
      if (waitPhase_[w] < to) {  // met: unlink and wake
        *link = waitNext_[w];
        waitNext_[w] = -1;
        waitingOn_[w] = -1;
        queue_.emplace(std::max(time_[w], now), w);
      } else {
        link = &waitNext_[w];
      }
    }
  }

  // Start times of every rank and one agent per (rank, channel with ops), queued at its start.
  void seed() {
    const int n = info_.nranks;
    result_.finish.assign(static_cast<std::size_t>(n), 0.0);
    computeFree_.assign(static_cast<std::size_t>(n), 0.0);
    if (gated_) {
      nch_ = static_cast<std::size_t>(std::max(info_.nchannels, 1));
      nph_ = static_cast<std::size_t>(std::max(info_.nphases, 1));
      for (const plan::PhaseDep& d : info_.deps)
        if (d.channel < 0 || d.afterChannel < 0 || d.channel >= info_.nchannels || d.afterChannel >= info_.nchannels ||
            d.afterPhase >= d.phase)
          throw InvalidArgument("replay: phase dep of channel " + std::to_string(d.channel) + " phase " + std::to_string(d.phase) +
                                " on channel " + std::to_string(d.afterChannel) + " phase " + std::to_string(d.afterPhase) +
                                " is not a dep on an earlier phase of one of the plan's " + std::to_string(info_.nchannels) +
                                " channels");
      agentOf_.assign(static_cast<std::size_t>(n) * nch_, -1);
    }
    for (int r = 0; r < n; ++r) {
      // Start-up (topology.h ComputeParams): the launch (the NIC proxy is paid per message: connectionId).
      Micros start = topo_.spec().compute.launchLatency;
      for (const Straggler& s : opt_.stragglers)
        if (s.rank == r) start += std::chrono::duration<Micros, std::micro>(s.startDelay).count();
      result_.finish[r] = start;
      for (const auto& [begin, end] : source_.channelRuns(r)) {  // one agent per channel the rank has ops in
        Cursor cursor(plan::SourceOps{&source_, r, begin, end}, slice_);
        if (cursor.done()) continue;  // only empty ops (a rule source lists them; a plan drops them)
        const int a = static_cast<int>(agentRank_.size());
        if (gated_) {
          const int ch = cursor.current().channel;
          if (ch >= info_.nchannels)
            throw InvalidArgument("replay: rank " + std::to_string(r) + " has an op of channel " + std::to_string(ch) +
                                  " but the plan has " + std::to_string(info_.nchannels) + " channels");
          agentOf_[static_cast<std::size_t>(r) * nch_ + static_cast<std::size_t>(ch)] = a;
        }
        agentRank_.push_back(r);
        cursor_.push_back(std::move(cursor));
        known_.emplace_back();
        gather_.emplace_back();
        gatherReady_.push_back(0);
        time_.push_back(start);
        queue_.emplace(start, a);
      }
    }
    sharesCompute_.assign(static_cast<std::size_t>(n), 0);
    agentBegin_.assign(static_cast<std::size_t>(n) + 1, 0);
    for (std::size_t a = 0; a < agentRank_.size(); ++a) {  // agents are made rank by rank
      ++agentBegin_[static_cast<std::size_t>(agentRank_[a]) + 1];
      if (a > 0 && agentRank_[a] == agentRank_[a - 1]) sharesCompute_[static_cast<std::size_t>(agentRank_[a])] = 1;
    }
    for (int r = 0; r < n; ++r) agentBegin_[static_cast<std::size_t>(r) + 1] += agentBegin_[static_cast<std::size_t>(r)];
    if (gated_) {
      const std::size_t agents = agentRank_.size();
      gatePassed_.assign(agents, -1);
      passed_.assign(agents * nph_, 0.0);
      waitHead_.assign(agents, -1);
      waitNext_.assign(agents, -1);
      waitPhase_.assign(agents, 0);
      waitingOn_.assign(agents, -1);
      if (opt_.trace) blockedAt_.assign(agents, -1.0);
    }
  }

  struct Known {
    int peer;
    bool out;
    int id;
  };
  const plan::OpSource& source_;
  const plan::PlanInfo info_;
  const Topology& topo_;
  const ReplayOptions& opt_;
  const ProtocolCost cost_;
  // Phase deps (only when the plan has some; a plan without runs runAgentAs<false>, no gate code).
  const plan::PhaseGates gates_{info_.deps};
  const bool gated_ = !info_.deps.empty();
  std::size_t nch_ = 0, nph_ = 0;
  std::vector<int> agentOf_;     // [rank * nchannels + channel]: its agent, -1 where it has no ops
  std::vector<int> gatePassed_;  // per agent: the phase whose deps it has seen met (-1: none yet)
  std::vector<Micros> passed_;   // [agent * nphases + q]: when it finished its ops of phases <= q (passedAt)
  std::vector<int> waitHead_, waitNext_, waitPhase_;  // agents waiting on an agent's phase: a list each
  std::vector<int> waitingOn_;   // per agent: the agent whose phase it waits for (-1: none)
  std::vector<Micros> blockedAt_;  // with a trace: when the agent began waiting at a gate (-1: not)
  bool abandoned_ = false;
  std::int64_t slice_ = 0;
  std::vector<Connection> conns_;
  std::unordered_map<std::int64_t, int> ids_;  // (channel, src, dst) -> connection
  std::vector<int> routeRes_;
  std::vector<MicrosPerByte> resBeta_;
  FlowNetwork net_;
  // Agents: one per (rank, channel with ops): its rank, its cursor, the connections it used, its clock.
  std::vector<int> agentRank_;
  std::vector<Cursor> cursor_;
  std::vector<std::vector<Known>> known_;
  std::vector<std::vector<int>> gather_;  // ReduceAll's incoming connections (gatherOf), per agent
  std::vector<Micros> time_;
  std::vector<int> gatherReady_;  // ReduceAll in progress: how many of its peers' slices have arrived
  // A rank's reductions and copies use its memory bandwidth (γ, δ are per rank): its channels take
  // turns at it, so more channels do not make a rank compute faster.
  std::vector<Micros> computeFree_;
  std::vector<char> sharesCompute_;  // per rank: has it more than one agent (waitForCompute)?
  std::vector<int> agentBegin_;      // rank r's agents are agentBegin_[r] .. agentBegin_[r+1]-1
  EventQueue queue_;  // agents (id >= 0) and flow ends (-1 - flow id), by (time, id): event_queue.h
  ReplayResult result_;
};

}  // namespace

std::int64_t resolvedSliceElems(const plan::OpSource& source, const ReplayOptions& options) {
  return options.sliceElems > 0 ? options.sliceElems : options.sliceElems == 0 ? autoSliceElems(source, options.elemSize) : 0;
}

std::int64_t replayOpSlices(const plan::OpSource& source, const Topology& topo, const ReplayOptions& options, std::int64_t limit) {
  const auto runs = static_cast<std::int64_t>(protocolCandidates(topo.spec(), options.protocol).size());
  const std::int64_t perRun = source.opSlices(resolvedSliceElems(source, options), limit / runs);
  return perRun > limit / runs ? limit + 1 : perRun * runs;
}

std::int64_t autoSliceElems(const plan::OpSource& source, std::int64_t elemSize) {
  const std::int64_t maxOp = source.maxOpCount();
  const std::int64_t minElems = std::max<std::int64_t>(1, kMinAutoSliceBytes / std::max<std::int64_t>(1, elemSize));
  const std::int64_t wanted = (maxOp + kAutoSlicesPerOp - 1) / kAutoSlicesPerOp;
  const std::int64_t s = std::max(wanted, minElems);
  return s >= maxOp ? 0 : s;
}

std::int64_t autoSliceElems(const plan::Plan& plan, std::int64_t elemSize) {
  return autoSliceElems(plan::PlanOpSource(plan), elemSize);
}

ReplayResult replay(const plan::OpSource& source, const Topology& topo, const ReplayOptions& options) {
  const std::vector<Protocol> protocols = protocolCandidates(topo.spec(), options.protocol);
  if (protocols.size() == 1) {
    ReplayResult r = Engine(source, topo, options, protocols.front()).run();
    r.stepsAllRuns = r.steps;
    return r;
  }
  // Auto: one run per protocol, side by side in simulated time (the run whose clock is behind runs
  // until it passes the other's, at most kEventsPerTurn events), so once one finishes the other is
  // abandoned as soon as its clock passes that finish: the loser costs what it ran up to the winner's
  // finish, whichever wins. The faster wins, a tie goes to Simple; each run's result does not depend
  // on the turns.
  constexpr std::int64_t kEventsPerTurn = 4096;
  std::vector<std::unique_ptr<Engine>> runs;
  for (const Protocol p : protocols) {
    runs.push_back(std::make_unique<Engine>(source, topo, options, p));
    runs.back()->begin();
  }
  ReplayResult best;
  bool have = false;
  std::int64_t steps = 0;
  for (;;) {
    Engine* next = nullptr;
    for (auto& run : runs)
      if (run && (!next || run->clock() < next->clock())) next = run.get();
    if (!next) break;
    Micros other = std::numeric_limits<Micros>::infinity();
    for (auto& run : runs)
      if (run && run.get() != next) other = std::min(other, run->clock());
    next->advance(kEventsPerTurn, have ? best.time : std::numeric_limits<Micros>::infinity(), other);
    if (next->running()) continue;
    steps += next->steps();
    if (!next->abandoned()) {
      ReplayResult r = next->finish();
      if (!have || r.time < best.time || (r.time == best.time && r.protocol == Protocol::Simple)) {
        best = std::move(r);
        have = true;
      }
    }
    for (auto& run : runs)
      if (run.get() == next) run.reset();  // its memory goes now
  }
  best.stepsAllRuns = steps;
  return best;
}

ReplayResult replay(const plan::Plan& plan, const Topology& topo, const ReplayOptions& options) {
  return replay(plan::PlanOpSource(plan), topo, options);
}

std::int64_t traceEventBound(const plan::OpSource& source, const ReplayOptions& options) {
  const plan::PlanInfo& info = source.info();
  // Counted up to the op-slice limit, exact within it (a replay past it is refused anyway).
  const std::int64_t opSlices = source.opSlices(resolvedSliceElems(source, options), std::max<std::int64_t>(1, options.maxOpSlices));
  const std::int64_t gates = info.deps.empty() ? 0
                             : static_cast<std::int64_t>(info.nranks) * std::max(1, info.nchannels) * std::max(1, info.nphases);
  return 2 * opSlices + gates;
}

namespace {

// A JSON number; a time that is not finite (never expected) as null, as nlohmann writes it.
void appendNumber(std::string& out, double x) {
  if (std::isfinite(x))
    fmt::format_to(std::back_inserter(out), "{}", x);
  else
    out += "null";
}

}  // namespace

void writeChromeTrace(const ReplayResult& result, const Topology& topo, const std::string& path) {
  // Written in pieces of about 1 MiB as it is made: a JSON tree of every event took several times the
  // file's size (4.3 GB for a 230 MB trace). Whole or not at all; the old file kept on failure.
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  conventions::AtomicFileWriter file(path);
  std::string out = R"j({"traceEvents":[{"name":"process_name","ph":"M","pid":0,"args":{"name":"ranks (compute, waits)"}},)j"
                    R"j({"name":"process_name","ph":"M","pid":1,"args":{"name":"transfers (by sender)"}})j";
  for (const TraceEvent& e : result.trace) {
    fmt::format_to(std::back_inserter(out), R"(,{{"name":{},"ph":"X","pid":{},"tid":{},"ts":)", nlohmann::json(e.name).dump(), e.pid, e.tid);
    appendNumber(out, e.start);
    out += R"(,"dur":)";
    appendNumber(out, e.duration);
    fmt::format_to(std::back_inserter(out), R"(,"args":{{"bytes":{}}}}})", e.bytes);
    if (out.size() >= kPiece) {
      file.write(out);
      out.clear();
    }
  }
  fmt::format_to(std::back_inserter(out), R"(],"displayTimeUnit":"ns","otherData":{{"topology":{},"truncated":{}}}}})",
                 nlohmann::json(topo.spec().name).dump(), result.traceTruncated);
  out += '\n';
  file.write(out);
  file.commit();
}

}  // namespace cclab::sim
