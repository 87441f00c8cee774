// From a file's threadblocks of steps to a validated unit plan (file_program.h).
#include "collectives/plan/file_program.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <tuple>

#include "collectives/core/errors.h"
#include "collectives/plan/validate.h"

namespace cclab::plan::files {

std::int64_t parseInteger(const std::string& text, std::int64_t lo, std::int64_t hi, const std::string& what) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end)
    throw InvalidArgument(what + " must be an integer, got '" + text.substr(0, 40) + "'");
  if (v < lo || v > hi)
    throw InvalidArgument(what + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + text);
  return v;
}

Collective collectiveNamed(const std::string& s, const std::string& where) {
  if (s == "allreduce") return Collective::AllReduce;
  if (s == "allgather") return Collective::AllGather;
  if (s == "reduce_scatter" || s == "reducescatter") return Collective::ReduceScatter;
  if (s == "broadcast") return Collective::Broadcast;
  if (s == "reduce") return Collective::Reduce;
  throw InvalidArgument(where + ": collective '" + s + "' is not allreduce, allgather, reduce_scatter, broadcast or reduce");
}

Buf bufferNamed(const std::string& s, const std::string& where) {
  if (s == "i" || s == "input") return Buf::Input;
  if (s == "o" || s == "output") return Buf::Output;
  if (s == "s" || s == "scratch") return Buf::Scratch;
  throw InvalidArgument(where + ": buffer '" + s + "' is not i, o or s");
}

const char* bufferName(Buf b) { return b == Buf::Input ? "i" : b == Buf::Output ? "o" : "s"; }

namespace {

using Lists = std::vector<std::vector<std::vector<Op>>>;  // lists[rank][channel]

// A step waits on another threadblock's channel: the plan has no per-rank dependency between channels,
// so such a program (and an in-place-only one, which gains a first copy) runs as one channel.
bool needsOneChannel(const Program& p) {
  if (p.inPlaceOnly) return true;
  for (const auto& tbs : p.gpus)
    for (const auto& tb : tbs)
      for (const auto& s : tb.steps)
        if (s.depTb >= 0 && tbs[static_cast<std::size_t>(s.depTb)].channel != tb.channel) return true;
  return false;
}

// Runs every threadblock as far as it can, one message in flight per (channel, from, to), until all
// are done; the order in which each (rank, channel) ran its ops is the plan's.
Lists schedule(const Program& p, int nchannels) {
  const int P = p.nranks;
  Lists lists(static_cast<std::size_t>(P), std::vector<std::vector<Op>>(static_cast<std::size_t>(nchannels)));
  std::map<std::tuple<int, int, int>, int> pending;  // (channel, from, to) -> messages sent, not yet received
  // Per threadblock: its next step, and the next op inside it (a step's receive runs before its send,
  // so a ring of receive-then-send steps does not wait on itself).
  std::vector<std::vector<std::size_t>> next(static_cast<std::size_t>(P)), within(static_cast<std::size_t>(P));
  std::int64_t remaining = 0;
  for (int r = 0; r < P; ++r) {
    next[static_cast<std::size_t>(r)].assign(p.gpus[static_cast<std::size_t>(r)].size(), 0);
    within[static_cast<std::size_t>(r)].assign(p.gpus[static_cast<std::size_t>(r)].size(), 0);
    for (const auto& tb : p.gpus[static_cast<std::size_t>(r)]) remaining += static_cast<std::int64_t>(tb.steps.size());
  }
  auto ready = [&](int r, int channel, const Op& op) {
    if (op.kind == OpKind::Send) return pending[{channel, r, op.peer}] == 0;
    if (op.kind == OpKind::Recv || op.kind == OpKind::RecvReduce) return pending[{channel, op.peer, r}] > 0;
    if (op.kind == OpKind::ReduceAll)
      for (int q = 0; q < P; ++q)
        if (q != r && pending[{channel, q, r}] == 0) return false;
    return true;
  };
  for (bool progress = true; remaining > 0 && progress;) {
    progress = false;
    for (int r = 0; r < P; ++r) {
      const auto& tbs = p.gpus[static_cast<std::size_t>(r)];
      for (std::size_t t = 0; t < tbs.size(); ++t) {
        std::size_t& i = next[static_cast<std::size_t>(r)][t];
        std::size_t& k = within[static_cast<std::size_t>(r)][t];
        const int channel = tbs[t].channel;
        while (i < tbs[t].steps.size()) {
          const Step& s = tbs[t].steps[i];
          if (k == 0 && s.depTb >= 0 && next[static_cast<std::size_t>(r)][static_cast<std::size_t>(s.depTb)] <= static_cast<std::size_t>(s.depStep))
            break;
          if (k < s.ops.size()) {
            Op op = s.ops[k];
            if (!ready(r, channel, op)) break;
            op.channel = static_cast<std::uint8_t>(channel);
            if (op.kind == OpKind::Send) ++pending[{channel, r, op.peer}];
            if (op.kind == OpKind::Recv || op.kind == OpKind::RecvReduce) --pending[{channel, op.peer, r}];
            if (op.kind == OpKind::ReduceAll)
              for (int q = 0; q < P; ++q)
                if (q != r) --pending[{channel, q, r}];
            lists[static_cast<std::size_t>(r)][static_cast<std::size_t>(channel)].push_back(op);
            ++k;
          } else {  // the step is done
            ++i;
            k = 0;
            --remaining;
          }
          progress = true;
        }
      }
    }
  }
  if (remaining > 0)
    for (int r = 0; r < P; ++r)
      for (std::size_t t = 0; t < p.gpus[static_cast<std::size_t>(r)].size(); ++t) {
        const auto& steps = p.gpus[static_cast<std::size_t>(r)][t].steps;
        const std::size_t i = next[static_cast<std::size_t>(r)][t];
        if (i < steps.size())
          throw InvalidArgument("the steps cannot all run: " + steps[i].where +
                                " waits forever (for a message, a free connection or its dependency)");
      }
  return lists;
}

struct Touch {
  int space;
  std::int64_t begin, end;
  bool write;
};

// The elements an op touches, in two views: out of place (every buffer its own space) and in place
// (input and output one space, at NCCL's in-place offsets).
std::vector<Touch> touches(const Op& op, Collective c, int rank, std::int64_t U) {
  std::vector<Touch> t;
  auto add = [&](Range r, bool write) {
    t.push_back({static_cast<int>(r.buf), r.offset, r.end(), write});
    std::int64_t off = r.offset;
    int space = 3 + static_cast<int>(r.buf);
    if (r.buf == Buf::Input && c != Collective::ReduceScatter) {
      space = 3 + static_cast<int>(Buf::Output);
      off += inPlaceInputOffset(c, rank, U);
    } else if (r.buf == Buf::Output && c == Collective::ReduceScatter) {
      space = 3 + static_cast<int>(Buf::Input);
      off += inPlaceOutputOffset(c, rank, U);
    }
    t.push_back({space, off, off + r.count, write});
  };
  if (op.reads()) add(op.src, false);
  if (op.writes()) add(op.dst, true);
  return t;
}

bool conflict(const std::vector<Touch>& a, const std::vector<Touch>& b) {
  for (const Touch& x : a)
    for (const Touch& y : b)
      if (x.space == y.space && (x.write || y.write) && x.begin < y.end && y.begin < x.end && x.begin != y.begin) return true;
  return false;
}

void assignPhases(Lists& lists, Collective c, std::int64_t U) {
  const int P = static_cast<int>(lists.size());
  std::int64_t total = 0;
  for (auto& chans : lists)
    for (auto& ops : chans)
      for (Op& op : ops) {
        op.phase = 0;
        ++total;
      }
  // The k-th send and the k-th receive of every connection; a reduceAll receives on every one.
  std::map<std::tuple<int, int, int>, std::pair<std::vector<Op*>, std::vector<Op*>>> conns;
  for (int r = 0; r < P; ++r)
    for (auto& ops : lists[static_cast<std::size_t>(r)])
      for (Op& op : ops) {
        if (op.kind == OpKind::Send) conns[{op.channel, r, op.peer}].first.push_back(&op);
        if (op.kind == OpKind::Recv || op.kind == OpKind::RecvReduce) conns[{op.channel, op.peer, r}].second.push_back(&op);
        if (op.kind == OpKind::ReduceAll)
          for (int q = 0; q < P; ++q)
            if (q != r) conns[{op.channel, q, r}].second.push_back(&op);
      }
  for (bool changed = true; changed;) {
    changed = false;
    for (int r = 0; r < P; ++r)
      for (auto& ops : lists[static_cast<std::size_t>(r)])
        for (std::size_t i = 1; i < ops.size(); ++i) {
          if (ops[i].phase < ops[i - 1].phase) {
            ops[i].phase = ops[i - 1].phase;
            changed = true;
          }
          const auto ti = touches(ops[i], c, r, U);
          for (std::size_t j = i; j-- > 0 && ops[j].phase == ops[i].phase;)
            if (conflict(touches(ops[j], c, r, U), ti)) {
              ops[i].phase = ops[j].phase + 1;
              changed = true;
              break;
            }
          if (ops[i].phase > total) throw InvalidArgument("the steps admit no phases (a message is needed before it can be sent)");
        }
    for (auto& [key, ends] : conns)
      for (std::size_t k = 0; k < std::min(ends.first.size(), ends.second.size()); ++k) {
        Op& s = *ends.first[k];
        Op& v = *ends.second[k];
        if (s.phase != v.phase) {
          s.phase = v.phase = std::max(s.phase, v.phase);
          changed = true;
        }
      }
  }
}

// The step of `tbs` whose only op receives exactly `slot` into scratch (nullptr: none).
Step* receiverOf(std::vector<Threadblock>& tbs, const Range& slot) {
  for (auto& tb : tbs)
    for (auto& s : tb.steps)
      if (s.ops.size() == 1 && s.ops[0].kind == OpKind::Recv && s.ops[0].dst == slot) return &s;
  return nullptr;
}

// See the header comment.
void fuseLocalReduces(Program& p) {
  for (std::size_t r = 0; r < p.gpus.size(); ++r) {
    auto& tbs = p.gpus[r];
    std::vector<Step*> reduces;
    for (auto& tb : tbs)
      for (auto& s : tb.steps) {
        if (s.reduceAll) {  // every other rank's message arrived in its slot: one reduceAll here
          std::vector<bool> from(p.gpus.size(), false);
          for (const Range& slot : s.reduceSlots) {
            Step* got = receiverOf(tbs, slot);
            if (!got || from[static_cast<std::size_t>(got->ops[0].peer)])
              throw InvalidArgument(s.where + ": a reduceAll slot is not one message of its own peer");
            from[static_cast<std::size_t>(got->ops[0].peer)] = true;
            got->ops.clear();
          }
          if (s.reduceSlots.size() + 1 != p.gpus.size())
            throw InvalidArgument(s.where + ": a reduceAll reduces one message from every other rank");
          s.ops = {Op{OpKind::ReduceAll, -1, 0, s.reduceOperand, s.reduceDst}};
          s.reduceAll = false;
        }
        if (s.localReduce) reduces.push_back(&s);
      }
    if (reduces.empty()) continue;
    for (auto& tb : tbs)
      for (auto& s : tb.steps) {
        if (s.ops.size() != 1 || s.ops[0].kind != OpKind::Recv || s.ops[0].dst.buf != Buf::Scratch) continue;
        const Range got = s.ops[0].dst;
        std::vector<Step*> covering;
        for (Step* x : reduces)
          if (x->localReduce && x->reduceSrc.buf == Buf::Scratch && x->reduceSrc.offset >= got.offset && x->reduceSrc.end() <= got.end())
            covering.push_back(x);
        if (covering.empty()) continue;
        std::sort(covering.begin(), covering.end(), [](const Step* a, const Step* b) { return a->reduceSrc.offset < b->reduceSrc.offset; });
        const Step& first = *covering.front();
        const std::int64_t delta = first.reduceDst.offset - first.reduceSrc.offset;
        const std::int64_t operandDelta = first.reduceOperand.offset - first.reduceSrc.offset;
        std::int64_t at = got.offset;
        bool tiles = true;
        for (const Step* x : covering) {
          tiles = tiles && x->reduceSrc.offset == at && x->reduceDst.buf == first.reduceDst.buf &&
                  x->reduceDst.offset - x->reduceSrc.offset == delta && x->reduceOperand.buf == first.reduceOperand.buf &&
                  x->reduceOperand.offset - x->reduceSrc.offset == operandDelta;
          at = x->reduceSrc.end();
        }
        if (!tiles || at != got.end())
          throw InvalidArgument(first.where + ": its local reduce and the others of " + s.where +
                                "'s receive do not reduce the whole message into one range; cclab has no local reduce op");
        const Range into{first.reduceDst.buf, got.offset + delta, got.count};
        const Range operand{first.reduceOperand.buf, got.offset + operandDelta, got.count};
        s.ops[0] = Op{OpKind::RecvReduce, s.ops[0].peer, s.phase < 0 ? 0 : s.phase, operand, into};
        for (Step* x : covering) x->localReduce = false;  // a dependency only from now on
      }
    for (const Step* x : reduces)
      if (x->localReduce)
        throw InvalidArgument(x->where + ": a local reduce of a range no single receive into scratch filled; cclab has no local reduce op");
  }
}

}  // namespace

AlgorithmFile toAlgorithmFile(Program p) {
  try {
    fuseLocalReduces(p);
    const bool one = needsOneChannel(p);
    int nchannels = 1;
    bool phasesGiven = true;
    for (auto& tbs : p.gpus)
      for (auto& tb : tbs) {
        if (one) tb.channel = 0;
        nchannels = std::max(nchannels, tb.channel + 1);
        for (const auto& s : tb.steps) phasesGiven = phasesGiven && (s.ops.empty() || s.phase >= 0);
      }
    if (one) {
      p.deps.clear();
      phasesGiven = false;
    }
    // Phases given by the file travel on the ops through the schedule.
    for (auto& tbs : p.gpus)
      for (auto& tb : tbs)
        for (auto& s : tb.steps)
          for (Op& op : s.ops) op.phase = phasesGiven ? s.phase : 0;
    Lists lists = schedule(p, nchannels);
    if (p.inPlaceOnly && p.collective == Collective::ReduceScatter)
      throw InvalidArgument("a reduce-scatter that works in place only has no cclab form");
    if (p.inPlaceOnly && p.collective == Collective::AllGather)  // its block of the output is the input: copy it there first
      for (int r = 0; r < p.nranks; ++r)
        if (p.unitCount > 0)
          lists[static_cast<std::size_t>(r)][0].insert(lists[static_cast<std::size_t>(r)][0].begin(),
                                                        Op{OpKind::Copy, -1, 0, {Buf::Input, 0, p.unitCount}, {Buf::Output, r * p.unitCount, p.unitCount}});
    if (p.inPlaceOnly && p.collective != Collective::AllGather)  // the input is the output: copy it there first, then work on the output
      for (int r = 0; r < p.nranks; ++r) {
        auto& ops = lists[static_cast<std::size_t>(r)][0];
        for (Op& op : ops) {
          if (op.reads() && op.src.buf == Buf::Input) op.src.buf = Buf::Output;
          if (op.writes() && op.dst.buf == Buf::Input) op.dst.buf = Buf::Output;
        }
        const std::int64_t in = bufferCounts(p.collective, p.nranks, p.unitCount).input;
        if (!(p.collective == Collective::Broadcast && r != p.root) && in > 0)
          ops.insert(ops.begin(), Op{OpKind::Copy, -1, 0, {Buf::Input, 0, in}, {Buf::Output, 0, in}});
      }
    if (!phasesGiven) assignPhases(lists, p.collective, p.unitCount);

    AlgorithmFile f;
    f.name = p.name;
    Plan& u = f.unit;
    u.collective = p.collective;
    u.algorithm = Algorithm::Ring;
    u.nranks = p.nranks;
    u.count = p.unitCount;
    u.root = p.root;
    u.nchannels = nchannels;
    u.ranksPerNode = p.ranksPerNode;
    u.scratchCount = p.scratchChunks;
    u.deps = p.deps;
    u.ranks.resize(static_cast<std::size_t>(p.nranks));
    int maxPhase = 0;
    for (int r = 0; r < p.nranks; ++r)
      for (auto& ops : lists[static_cast<std::size_t>(r)])
        for (const Op& op : ops) {
          maxPhase = std::max(maxPhase, op.phase);
          u.ranks[static_cast<std::size_t>(r)].push_back(op);
        }
    u.nphases = std::max(maxPhase + 1, p.nphases);
    const BufferCounts sizes = bufferCounts(u.collective, u.nranks, u.count);
    if ((std::max(sizes.input, sizes.output) + u.scratchCount) * u.nranks * u.nranks > kMaxFileCheckCells)
      throw InvalidArgument("its chunks x ranks^2 exceed " + std::to_string(kMaxFileCheckCells) +
                            ", more than the validator checks; write it with fewer, larger chunks");
    const auto problems = validate(u);
    if (!problems.empty())
      throw InvalidArgument("does not validate: " + problems.front() +
                            (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""));
    return f;
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("algorithm '" + p.name + "': " + e.what());
  }
}

}  // namespace cclab::plan::files
