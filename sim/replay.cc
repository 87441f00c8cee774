// Event-driven replay of a plan; the model is described in replay.h.
#include "sim/replay.h"

#include "collectives/core/errors.h"

// GCC 12 reports a false -Wrestrict inside std::string concatenation at -O2 (GCC bug 105651).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "collectives/plan/slice_walk.h"

namespace cclab::sim {
namespace {

using plan::OpKind;

// One op of one rank, compiled: its element count, the channel it uses, its phase (what
// plan::SliceWalker needs to walk it in executor order).
struct Instr {
  std::int64_t elems = 0;
  int channel = -1;  // Send: outgoing channel; Recv/RecvReduce: incoming; Copy: -1
  OpKind kind = OpKind::Copy;
  int phase = 0;
  [[nodiscard]] std::int64_t count() const { return elems; }
};
using Cursor = plan::SliceWalker<Instr>;

// A FIFO channel between an ordered pair of ranks, with its route.
struct Channel {
  int src = 0, dst = 0;
  int routeBegin = 0, routeEnd = 0;  // into Engine::routeRes_
  Micros latency = 0;
  MicrosPerByte bottleneckBeta = 0;
  std::vector<Micros> arrivals;  // in flight: arrival times, consumed from head
  std::size_t head = 0;
  int waiting = -1;  // rank blocked on this channel

  [[nodiscard]] bool empty() const { return head == arrivals.size(); }
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
  Engine(const plan::Plan& plan, const Topology& topo, const ReplayOptions& opt) : plan_(plan), topo_(topo), opt_(opt) {}

  ReplayResult run() {
    const int n = plan_.nranks;
    if (n > kMaxReplayRanks)
      throw InvalidArgument("replay: " + std::to_string(n) + " ranks is more than a replay runs (" +
                            std::to_string(kMaxReplayRanks) + "); use the analytic model");
    if (n > topo_.nranks())
      throw InvalidArgument("replay: plan has " + std::to_string(n) + " ranks but topology '" +
                                  topo_.spec().name + "' has " + std::to_string(topo_.nranks()));
    result_.sliceElems = opt_.sliceElems > 0 ? opt_.sliceElems : opt_.sliceElems == 0 ? autoSliceElems(plan_, opt_.elemSize) : 0;
    slice_ = result_.sliceElems;
    compile();
    checkSize();
    setupResources();
    simulate();
    return std::move(result_);
  }

 private:
  void compile() {
    const int n = plan_.nranks;
    code_.resize(static_cast<std::size_t>(n));
    std::unordered_map<std::int64_t, int> ids;
    struct PeerChannel {
      int peer;
      bool out;
      int id;
    };
    for (int r = 0; r < n; ++r) {
      const auto& ops = plan_.ranks[static_cast<std::size_t>(r)];
      auto& code = code_[static_cast<std::size_t>(r)];
      code.reserve(ops.size());
      std::vector<PeerChannel> known;  // few peers per rank: a linear scan beats a hash
      for (const auto& op : ops) {
        Instr in;
        in.kind = op.kind;
        in.elems = op.count();
        in.phase = op.phase;
        if (op.kind != OpKind::Copy) {
          if (op.peer < 0 || op.peer >= n || op.peer == r)
            throw InvalidArgument("replay: rank " + std::to_string(r) + " has an op with bad peer " + std::to_string(op.peer));
          const bool out = op.kind == OpKind::Send;
          int id = -1;
          for (const auto& k : known)
            if (k.peer == op.peer && k.out == out) id = k.id;
          if (id < 0) {
            const int src = out ? r : op.peer, dst = out ? op.peer : r;
            const std::int64_t key = std::int64_t{src} * n + dst;
            auto [it, inserted] = ids.try_emplace(key, static_cast<int>(channels_.size()));
            if (inserted) {
              Channel c;
              c.src = src;
              c.dst = dst;
              channels_.push_back(std::move(c));
            }
            id = it->second;
            known.push_back({op.peer, out, id});
          }
          in.channel = id;
        }
        code.push_back(in);
      }
    }
  }

  void checkSize() const {
    std::int64_t total = 0;
    for (const auto& code : code_)
      for (const Instr& in : code) {
        total += plan::sliceCount(in.count(), slice_);
        if (total > kMaxReplayOpSlices)
          throw InvalidArgument("replay: the slice size " + std::to_string(slice_) + " elements cuts this plan into more than " +
                                std::to_string(kMaxReplayOpSlices) + " op-slices (about a minute of replay); use a larger --slice");
      }
  }

  void setupResources() {
    const auto& res = topo_.resources();
    resBeta_.resize(res.size());
    for (std::size_t i = 0; i < res.size(); ++i) {
      const double slow = i < opt_.resourceSlowdown.size() ? opt_.resourceSlowdown[i] : 1.0;
      resBeta_[i] = inverseBandwidth(res[i].bandwidth) * slow;
    }
    for (const Straggler& s : opt_.stragglers)
      if (s.rank >= 0 && s.rank < plan_.nranks)
        for (int id : topo_.rankLinks(s.rank)) resBeta_[static_cast<std::size_t>(id)] *= s.linkFactor;
    freeAt_.assign(res.size(), 0.0);
    result_.busy.assign(res.size(), 0.0);
    result_.bytes.assign(res.size(), 0);
    // Routes: one search per source rank over the destinations it sends to.
    std::vector<std::vector<int>> bySrc(static_cast<std::size_t>(plan_.nranks));
    for (int c = 0; c < static_cast<int>(channels_.size()); ++c) bySrc[channels_[c].src].push_back(c);
    for (int src = 0; src < plan_.nranks; ++src) {
      const auto& list = bySrc[static_cast<std::size_t>(src)];
      if (list.empty()) continue;
      std::vector<int> dsts;
      for (int c : list) dsts.push_back(channels_[c].dst);
      const auto routes = topo_.routesFrom(topo_.rankNode(src), dsts);
      for (std::size_t i = 0; i < list.size(); ++i) {
        Channel& ch = channels_[list[i]];
        ch.routeBegin = static_cast<int>(routeRes_.size());
        ch.latency = routes[i].latency;
        for (int id : routes[i].resources) {
          routeRes_.push_back(id);
          ch.bottleneckBeta = std::max(ch.bottleneckBeta, resBeta_[id]);
        }
        ch.routeEnd = static_cast<int>(routeRes_.size());
      }
    }
  }

  [[nodiscard]] bool done(int r) const { return cursor_[r].done(); }

  // Starts a transfer of `bytes` on channel ch at time t; returns its arrival time.
  Micros transfer(Channel& ch, Micros t, Bytes bytes, int rank) {
    Micros start = t;
    for (int i = ch.routeBegin; i < ch.routeEnd; ++i) start = std::max(start, freeAt_[routeRes_[i]]);
    const auto b = static_cast<double>(bytes);
    for (int i = ch.routeBegin; i < ch.routeEnd; ++i) {
      const int id = routeRes_[i];
      const Micros d = b * resBeta_[id];
      freeAt_[id] = start + d;
      result_.busy[id] += d;
      result_.bytes[id] += bytes;
    }
    const Micros arrival = start + ch.latency + b * ch.bottleneckBeta;
    if (opt_.trace) record(labelled("send->", ch.dst), 1, rank, start, arrival - start, bytes);
    return arrival;
  }

  void record(std::string name, int pid, int tid, Micros start, Micros dur, Bytes bytes) {
    if (result_.trace.size() >= opt_.traceLimit) {
      result_.traceTruncated = true;
      return;
    }
    result_.trace.push_back({std::move(name), pid, tid, start, dur, bytes});
  }

  // Runs rank r from its current time until it blocks, finishes, or passes the next event.
  void runRank(int r) {
    auto& c = cursor_[r];
    const auto& code = code_[r];
    Micros& now = time_[r];
    double slow = 1.0;
    for (const Straggler& s : opt_.stragglers)
      if (s.rank == r) slow *= s.computeFactor;
    const MicrosPerByte gamma = topo_.reduceCost() * slow, delta = topo_.copyCost() * slow;
    for (;;) {
      if (done(r)) {
        result_.finish[r] = now;
        return;
      }
      const Instr& in = code[c.opIndex()];
      const auto [lo, hi] = c.sliceRange();
      const Bytes bytes = (hi - lo) * opt_.elemSize;
      switch (in.kind) {
        case OpKind::Send: {
          Channel& ch = channels_[in.channel];
          const Micros a = transfer(ch, now, bytes, r);
          ch.arrivals.push_back(a);
          if (ch.waiting >= 0) {
            const int w = ch.waiting;
            ch.waiting = -1;
            queue_.emplace(std::max(time_[w], a), w);
          }
          break;
        }
        case OpKind::Copy: {
          const Micros d = static_cast<double>(bytes) * delta;
          if (opt_.trace && d > 0) record("copy", 0, r, now, d, bytes);
          now += d;
          break;
        }
        case OpKind::Recv:
        case OpKind::RecvReduce: {
          Channel& ch = channels_[in.channel];
          if (ch.empty()) {
            ch.waiting = r;
            return;
          }
          const Micros a = ch.pop();
          if (opt_.trace && a > now) record(labelled("wait<-", ch.src), 0, r, now, a - now, 0);
          now = std::max(now, a);
          if (in.kind == OpKind::RecvReduce) {
            const Micros d = static_cast<double>(bytes) * gamma;
            if (opt_.trace && d > 0) record("reduce", 0, r, now, d, bytes);
            now += d;
          }
          break;
        }
      }
      ++result_.steps;
      c.advance();
      if (!queue_.empty() && now > queue_.top().first) {
        queue_.emplace(now, r);
        return;
      }
    }
  }

  void simulate() {
    const int n = plan_.nranks;
    cursor_.reserve(static_cast<std::size_t>(n));
    time_.assign(static_cast<std::size_t>(n), 0.0);
    result_.finish.assign(static_cast<std::size_t>(n), 0.0);
    for (int r = 0; r < n; ++r) {
      time_[r] = 0.0;
      for (const Straggler& s : opt_.stragglers)
        if (s.rank == r) time_[r] += std::chrono::duration<Micros, std::micro>(s.startDelay).count();
      cursor_.emplace_back(code_[r], slice_);
      queue_.emplace(time_[r], r);
    }
    while (!queue_.empty()) {
      const auto [t, r] = queue_.top();
      queue_.pop();
      time_[r] = std::max(time_[r], t);
      runRank(r);
    }
    std::string stuck;
    for (int r = 0; r < n; ++r)
      if (!done(r)) stuck += " " + std::to_string(r);
    if (!stuck.empty())
      throw std::runtime_error("replay: plan " + std::string(plan::name(plan_.collective)) + "/" +
                               std::string(plan::name(plan_.algorithm)) + " deadlocks; blocked ranks:" + stuck);
    result_.time = n > 0 ? *std::max_element(result_.finish.begin(), result_.finish.end()) : 0.0;
  }

  const plan::Plan& plan_;
  const Topology& topo_;
  const ReplayOptions& opt_;
  std::int64_t slice_ = 0;
  std::vector<std::vector<Instr>> code_;
  std::vector<Channel> channels_;
  std::vector<int> routeRes_;
  std::vector<MicrosPerByte> resBeta_;
  std::vector<Micros> freeAt_;
  std::vector<Cursor> cursor_;
  std::vector<Micros> time_;
  std::priority_queue<std::pair<Micros, int>, std::vector<std::pair<Micros, int>>, std::greater<>> queue_;
  ReplayResult result_;
};

}  // namespace

std::int64_t autoSliceElems(const plan::Plan& plan, std::int64_t elemSize) {
  std::int64_t maxOp = 0;
  for (const auto& ops : plan.ranks)
    for (const auto& op : ops) maxOp = std::max(maxOp, op.count());
  const std::int64_t minElems = std::max<std::int64_t>(1, kMinAutoSliceBytes / std::max<std::int64_t>(1, elemSize));
  const std::int64_t wanted = (maxOp + kAutoSlicesPerOp - 1) / kAutoSlicesPerOp;
  const std::int64_t s = std::max(wanted, minElems);
  return s >= maxOp ? 0 : s;
}

ReplayResult replay(const plan::Plan& plan, const Topology& topo, const ReplayOptions& options) {
  return Engine(plan, topo, options).run();
}

void writeChromeTrace(const ReplayResult& result, const Topology& topo, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write trace file '" + path + "'");
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "ranks (compute, waits)"}}}});
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "transfers (by sender)"}}}});
  for (const auto& e : result.trace)
    events.push_back({{"name", e.name}, {"ph", "X"}, {"pid", e.pid}, {"tid", e.tid}, {"ts", e.start},
                      {"dur", e.duration}, {"args", {{"bytes", e.bytes}}}});
  nlohmann::json doc = {{"traceEvents", events},
                        {"displayTimeUnit", "ns"},
                        {"otherData", {{"topology", topo.spec().name}, {"truncated", result.traceTruncated}}}};
  out << doc.dump() << "\n";
}

}  // namespace cclab::sim
