#include "collectives/plan/validate.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "collectives/plan/interpret.h"

namespace cclab::plan {
namespace {

constexpr std::size_t kMaxProblems = 20;

class Problems {
 public:
  template <class... Args>
  void add(Args&&... args) {
    if (list_.size() >= kMaxProblems) return;
    std::ostringstream m;
    (m << ... << args);
    list_.push_back(m.str());
  }
  std::vector<std::string> take() { return std::move(list_); }
  [[nodiscard]] bool empty() const { return list_.empty(); }

 private:
  std::vector<std::string> list_;
};

std::int64_t bufferSize(const Plan& p, Buf b) {
  const BufferCounts c = bufferCounts(p.collective, p.nranks, p.count);
  switch (b) {
    case Buf::Input: return c.input;
    case Buf::Output: return c.output;
    case Buf::Scratch: return p.scratchCount;
  }
  return 0;
}

void checkStructure(const Plan& p, Problems& out) {
  if (static_cast<int>(p.ranks.size()) != p.nranks) {
    out.add("plan has ", p.ranks.size(), " op lists for ", p.nranks, " ranks");
    return;
  }
  if (p.nchannels < 1 || p.nchannels > kMaxChannels) {
    out.add("plan has ", p.nchannels, " channels (1..", kMaxChannels, ")");
    return;
  }
  for (int r = 0; r < p.nranks; ++r) {
    int lastPhase = 0, lastChannel = 0;
    for (std::size_t i = 0; i < p.ranks[r].size(); ++i) {
      const Op& op = p.ranks[r][i];
      const auto where = [&] { return "rank " + std::to_string(r) + " op " + std::to_string(i) + " (" + describe(op) + ")"; };
      if (op.channel < lastChannel || op.channel >= p.nchannels)
        out.add(where(), ": channel ", int{op.channel}, " out of order or range");
      if (op.channel != lastChannel) lastPhase = 0;
      lastChannel = op.channel;
      if (op.phase < lastPhase || op.phase >= p.nphases) out.add(where(), ": phase ", op.phase, " out of order or range");
      lastPhase = op.phase;
      const bool pointToPoint = op.kind == OpKind::Send || op.kind == OpKind::Recv || op.kind == OpKind::RecvReduce;
      if (pointToPoint && (op.peer < 0 || op.peer >= p.nranks || op.peer == r)) out.add(where(), ": bad peer");
      if (op.reads() && (op.src.offset < 0 || op.src.count < 0 || op.src.end() > bufferSize(p, op.src.buf)))
        out.add(where(), ": source outside its buffer of ", bufferSize(p, op.src.buf));
      if (op.writes() && (op.dst.offset < 0 || op.dst.count < 0 || op.dst.end() > bufferSize(p, op.dst.buf)))
        out.add(where(), ": destination outside its buffer of ", bufferSize(p, op.dst.buf));
      if ((op.kind == OpKind::RecvReduce || op.kind == OpKind::Copy || op.kind == OpKind::ReduceAll) &&
          op.src.count != op.dst.count)
        out.add(where(), ": source and destination differ in length");
    }
  }
}

// Phase deps name channels and phases of the plan, another channel, and an earlier phase.
void checkDeps(const Plan& p, Problems& out) {
  for (const PhaseDep& d : p.deps) {
    const bool channels = d.channel >= 0 && d.channel < p.nchannels && d.afterChannel >= 0 && d.afterChannel < p.nchannels;
    if (!channels || d.channel == d.afterChannel || d.phase < 0 || d.phase >= p.nphases || d.afterPhase < 0 ||
        d.afterPhase >= d.phase)
      out.add("dep: channel ", d.channel, " phase ", d.phase, " after channel ", d.afterChannel, " phase ", d.afterPhase,
              ": needs two different channels of the plan and an earlier phase");
  }
}

// The FIFO connections: per (channel, from, to), sends and receives match in order.
void checkConnections(const Plan& p, Problems& out) {
  struct End {
    int rank;
    std::size_t op;
  };
  using Key = std::tuple<int, int, int>;  // channel, from, to
  std::map<Key, std::vector<End>> sends, recvs;
  for (int r = 0; r < p.nranks; ++r)
    for (std::size_t i = 0; i < p.ranks[r].size(); ++i) {
      const Op& op = p.ranks[r][i];
      if (op.kind == OpKind::Send) sends[{op.channel, r, op.peer}].push_back({r, i});
      if (op.kind == OpKind::Recv || op.kind == OpKind::RecvReduce) recvs[{op.channel, op.peer, r}].push_back({r, i});
      if (op.kind == OpKind::ReduceAll)
        for (int q = 0; q < p.nranks; ++q)
          if (q != r) recvs[{op.channel, q, r}].push_back({r, i});
    }
  auto keys = sends;
  for (const auto& [k, v] : recvs) keys[k];
  for (const auto& [key, unused] : keys) {
    const auto& s = sends[key];
    const auto& v = recvs[key];
    const auto [ch, from, to] = key;
    const std::string name = "connection " + std::to_string(from) + "->" + std::to_string(to) +
                             (p.nchannels > 1 ? " on channel " + std::to_string(ch) : "");
    if (s.size() != v.size()) out.add(name, ": ", s.size(), " sends but ", v.size(), " receives");
    for (std::size_t k = 0; k < std::min(s.size(), v.size()); ++k) {
      const Op& a = p.ranks[s[k].rank][s[k].op];
      const Op& b = p.ranks[v[k].rank][v[k].op];
      if (a.count() != b.count() || a.phase != b.phase)
        out.add(name, " message ", k, ": send (", describe(a), ") does not match receive (", describe(b), ")");
    }
  }
}

// Where a range lies in one flat address space per rank, under a buffer layout.
struct Layout {
  bool inPlace;
  std::int64_t flat(const Plan& p, int rank, const Range& r) const {
    constexpr std::int64_t kScratchBase = std::int64_t{1} << 50;
    const BufferCounts c = bufferCounts(p.collective, p.nranks, p.count);
    if (r.buf == Buf::Scratch) return kScratchBase + r.offset;
    if (!inPlace) return (r.buf == Buf::Input ? 0 : (std::int64_t{1} << 48)) + r.offset;
    if (c.output >= c.input)  // the input lies inside the output
      return r.buf == Buf::Output ? r.offset : inPlaceInputOffset(p.collective, rank, p.count) + r.offset;
    return r.buf == Buf::Input ? r.offset : inPlaceOutputOffset(p.collective, rank, p.count) + r.offset;
  }
};

void checkPipelining(const Plan& p, const Layout& layout, Problems& out) {
  for (int r = 0; r < p.nranks; ++r) {
    const auto& ops = p.ranks[r];
    std::size_t begin = 0;
    while (begin < ops.size()) {
      std::size_t end = begin;
      while (end < ops.size() && ops[end].phase == ops[begin].phase && ops[end].channel == ops[begin].channel) ++end;
      for (std::size_t j = begin; j < end; ++j)
        for (std::size_t i = begin; i < j; ++i) {
          const Op& a = ops[i];
          const Op& b = ops[j];
          auto clash = [&](const Range& x, const Range& y) {
            const std::int64_t fx = layout.flat(p, r, x), fy = layout.flat(p, r, y);
            const bool overlap = x.count > 0 && y.count > 0 && fx < fy + y.count && fy < fx + x.count;
            return overlap && fx != fy;
          };
          bool bad = false;
          if (a.writes() && b.reads()) bad = bad || clash(a.dst, b.src);
          if (a.writes() && b.writes()) bad = bad || clash(a.dst, b.dst);
          if (a.reads() && b.writes()) bad = bad || clash(a.src, b.dst);
          if (bad)
            out.add("rank ", r, " phase ", a.phase, (layout.inPlace ? " (in place)" : ""), ": ops ", i, " (", describe(a), ") and ",
                    j, " (", describe(b), ") overlap at different starts, so they cannot be pipelined in one phase");
        }
      begin = end;
    }
  }
}

// Which (channel, phase) steps of one rank are ordered before which: a channel's phases in order, and
// each dep's (afterChannel, its last phase <= afterPhase) before (channel, phase) where the channel has
// ops of that phase.
class HappensBefore {
 public:
  HappensBefore(const Plan& p, int rank) : nphases_(p.nphases), nodes_(static_cast<std::size_t>(p.nchannels * p.nphases)) {
    std::vector<std::vector<char>> present(static_cast<std::size_t>(p.nchannels), std::vector<char>(static_cast<std::size_t>(p.nphases)));
    for (const Op& op : p.ranks[static_cast<std::size_t>(rank)]) present[op.channel][static_cast<std::size_t>(op.phase)] = 1;
    std::vector<std::vector<int>> next(nodes_.size());
    for (int c = 0; c < p.nchannels; ++c) {
      int last = -1;
      for (int ph = 0; ph < p.nphases; ++ph)
        if (present[c][ph]) {
          if (last >= 0) next[id(c, last)].push_back(id(c, ph));
          last = ph;
        }
    }
    for (const PhaseDep& d : p.deps) {
      if (!present[static_cast<std::size_t>(d.channel)][static_cast<std::size_t>(d.phase)]) continue;
      for (int ph = d.afterPhase; ph >= 0; --ph)
        if (present[static_cast<std::size_t>(d.afterChannel)][static_cast<std::size_t>(ph)]) {
          next[id(d.afterChannel, ph)].push_back(id(d.channel, d.phase));
          break;
        }
    }
    for (std::size_t a = 0; a < nodes_.size(); ++a) {  // reachability from every node (a few hundred at most)
      auto& seen = nodes_[a];
      seen.assign(nodes_.size(), 0);
      std::vector<int> stack{static_cast<int>(a)};
      while (!stack.empty()) {
        const int v = stack.back();
        stack.pop_back();
        for (int w : next[static_cast<std::size_t>(v)])
          if (!seen[static_cast<std::size_t>(w)]) {
            seen[static_cast<std::size_t>(w)] = 1;
            stack.push_back(w);
          }
      }
    }
  }
  [[nodiscard]] bool ordered(int c1, int ph1, int c2, int ph2) const {
    return nodes_[id(c1, ph1)][id(c2, ph2)] || nodes_[id(c2, ph2)][id(c1, ph1)];
  }

 private:
  [[nodiscard]] std::size_t id(int c, int ph) const { return static_cast<std::size_t>(c * nphases_ + ph); }
  int nphases_;
  std::vector<std::vector<char>> nodes_;
};

// Channels share no element of any buffer that one of them writes (they may run concurrently), unless
// phase deps order the two accesses (HappensBefore).
void checkChannelsDisjoint(const Plan& p, const Layout& layout, Problems& out) {
  if (p.nchannels < 2) return;
  struct Span {
    std::int64_t begin, end;
    int channel;
    bool written;
    std::size_t op;
  };
  for (int r = 0; r < p.nranks; ++r) {
    std::optional<HappensBefore> order;
    if (!p.deps.empty()) order.emplace(p, r);
    std::vector<Span> spans;
    const auto& ops = p.ranks[r];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      auto add = [&](const Range& x, bool written) {
        if (x.count <= 0) return;
        const std::int64_t f = layout.flat(p, r, x);
        spans.push_back({f, f + x.count, op.channel, written, i});
      };
      if (op.reads()) add(op.src, false);
      if (op.writes()) add(op.dst, true);
    }
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
    for (std::size_t i = 0; i < spans.size(); ++i)
      for (std::size_t j = i + 1; j < spans.size() && spans[j].begin < spans[i].end; ++j)
        if (spans[i].channel != spans[j].channel && (spans[i].written || spans[j].written)) {
          const Op& a = ops[spans[i].op];
          const Op& b = ops[spans[j].op];
          if (order && order->ordered(a.channel, a.phase, b.channel, b.phase)) continue;
          out.add("rank ", r, (layout.inPlace ? " (in place)" : ""), ": ops ", spans[i].op, " (", describe(a), ") and ",
                  spans[j].op, " (", describe(b), ") of different channels touch the same elements",
                  p.deps.empty() ? "" : " and no phase dep orders them");
          return;
        }
  }
}

// A symbolic value: the sorted list of (rank, input element) contributions; kPoison marks garbage.
struct Sym {
  std::vector<std::int64_t> ids;
};
constexpr std::int64_t kPoison = -1;

Sym combineSym(const Sym& a, const Sym& b) {
  Sym s;
  s.ids.reserve(a.ids.size() + b.ids.size());
  std::merge(a.ids.begin(), a.ids.end(), b.ids.begin(), b.ids.end(), std::back_inserter(s.ids));
  return s;
}

void checkSymbolic(const Plan& p, bool inPlace, const InterpretOptions& io, Problems& out) {
  const BufferCounts c = bufferCounts(p.collective, p.nranks, p.count);
  const int n = p.nranks;
  const std::int64_t inSize = c.input;
  std::vector<std::vector<Sym>> inputs(n), outputs(n), scratch(n);
  std::vector<RankBuffers<Sym>> bufs(n);
  const Sym poison{{kPoison}};
  for (int r = 0; r < n; ++r) {
    outputs[r].assign(static_cast<std::size_t>(std::max(c.output, c.input)), poison);
    scratch[r].assign(static_cast<std::size_t>(p.scratchCount), poison);
    if (!inPlace) {
      inputs[r].resize(static_cast<std::size_t>(inSize));
      for (std::int64_t i = 0; i < inSize; ++i) inputs[r][i] = Sym{{r * inSize + i}};
      bufs[r] = {inputs[r].data(), outputs[r].data(), scratch[r].data()};
    } else {
      Sym* big = outputs[r].data();
      const bool inputInside = c.output >= c.input;
      Sym* in = inputInside ? big + inPlaceInputOffset(p.collective, r, p.count) : big;
      Sym* outp = inputInside ? big : big + inPlaceOutputOffset(p.collective, r, p.count);
      for (std::int64_t i = 0; i < inSize; ++i) in[i] = Sym{{r * inSize + i}};
      bufs[r] = {in, outp, scratch[r].data()};
    }
  }
  const std::string mode = std::string(inPlace ? "in place" : "out of place") + ", slice " + std::to_string(io.sliceElems) +
                           ", capacity " + std::to_string(io.connectionCapacity) +
                           (io.channelsInterleaved ? "" : ", channels one after the other");
  try {
    interpret<Sym>(p, bufs, combineSym, io);
  } catch (const std::exception& e) {
    out.add(mode, ": ", e.what());
    return;
  }
  const std::int64_t k = p.count;
  auto expect = [&](int r, std::int64_t i) -> Sym {  // expected value of output element i at rank r
    Sym s;
    switch (p.collective) {
      case Collective::AllReduce:
      case Collective::Reduce:
        for (int q = 0; q < n; ++q) s.ids.push_back(q * inSize + i);
        break;
      case Collective::ReduceScatter:
        for (int q = 0; q < n; ++q) s.ids.push_back(q * inSize + r * k + i);
        break;
      case Collective::AllGather: s.ids.push_back((i / k) * inSize + i % k); break;
      case Collective::Broadcast: s.ids.push_back(p.root * inSize + i); break;
    }
    return s;
  };
  for (int r = 0; r < n; ++r) {
    if (p.collective == Collective::Reduce && r != p.root) continue;
    for (std::int64_t i = 0; i < c.output; ++i) {
      const Sym want = expect(r, i);
      const Sym& got = bufs[r].output[i];
      if (got.ids != want.ids) {
        std::ostringstream g;
        for (auto id : got.ids) g << (id == kPoison ? std::string("garbage") : std::to_string(id / inSize) + ":" + std::to_string(id % inSize)) << ' ';
        out.add(mode, ": rank ", r, " output[", i, "] holds { ", g.str(), "}, expected each rank's element once");
        return;
      }
    }
  }
}

}  // namespace

std::vector<std::string> validate(const Plan& plan, const ValidateOptions& options) {
  Problems out;
  if (plan.nranks < 1) return {"plan has no ranks"};
  checkStructure(plan, out);
  checkDeps(plan, out);
  if (!out.empty()) return out.take();
  checkConnections(plan, out);
  checkPipelining(plan, Layout{false}, out);
  checkPipelining(plan, Layout{true}, out);
  checkChannelsDisjoint(plan, Layout{false}, out);
  checkChannelsDisjoint(plan, Layout{true}, out);
  if (!out.empty() || !options.symbolic) return out.take();
  for (bool inPlace : {false, true})
    for (std::int64_t s : options.sliceElems) {
      checkSymbolic(plan, inPlace, {s, 0, true}, out);
      checkSymbolic(plan, inPlace, {s, 1, true}, out);
      if (plan.nchannels > 1) checkSymbolic(plan, inPlace, {s, 1, false}, out);
    }
  return out.take();
}

}  // namespace cclab::plan
