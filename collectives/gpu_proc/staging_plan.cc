#include "collectives/gpu_proc/staging_plan.h"

#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include "collectives/core/errors.h"

namespace cclab::cuda {

int StagingPlan::messageOf(StepRef step) const {
  if (step.program < 0 || static_cast<std::size_t>(step.program) >= byStep.size()) return -1;
  const auto& steps = byStep[static_cast<std::size_t>(step.program)];
  if (step.step < 0 || static_cast<std::size_t>(step.step) >= steps.size()) return -1;
  return steps[static_cast<std::size_t>(step.step)];
}

StagingPlan planStaging(const LoweredPlan& lp, std::span<const int> nodeOf, std::size_t elemSize) {
  const int p = lp.nranks;
  if (static_cast<int>(nodeOf.size()) != p)
    throw InvalidArgument("cuda: the staging plan needs the node of each of " + std::to_string(p) + " ranks, got " +
                          std::to_string(nodeOf.size()));
  for (int n : nodeOf)
    if (n < 0) throw InvalidArgument("cuda: a rank on node " + std::to_string(n));
  if (elemSize == 0) throw InvalidArgument("cuda: element size 0");
  auto align = [](std::uint64_t v) { return (v + kStagingAlign - 1) / kStagingAlign * kStagingAlign; };

  StagingPlan sp;
  sp.sendBytes.assign(static_cast<std::size_t>(p), 0);
  sp.recvBytes.assign(static_cast<std::size_t>(p), 0);
  sp.outgoing.resize(static_cast<std::size_t>(p));
  sp.incoming.resize(static_cast<std::size_t>(p));
  sp.byStep.resize(lp.programs.size());
  for (std::size_t q = 0; q < lp.programs.size(); ++q) sp.byStep[q].assign(lp.programs[q].steps.size(), -1);
  std::map<std::tuple<int, int, int>, std::int64_t> sequence;  // (channel, from, to) -> next
  std::map<std::tuple<int, int, int>, StepRef> posted;       // (channel, from, to) -> latest postAfter
  for (const StepRef& ref : lp.issueOrder) {
    const RankProgram& prog = lp.programs[static_cast<std::size_t>(ref.program)];
    const Step& s = prog.steps[static_cast<std::size_t>(ref.step)];
    const int to = prog.rank, from = s.srcRank;
    if (from == to || nodeOf[static_cast<std::size_t>(from)] == nodeOf[static_cast<std::size_t>(to)]) continue;
    StagedMessage m;
    m.from = from;
    m.to = to;
    m.channel = prog.channel;
    const std::tuple<int, int, int> connection{prog.channel, from, to};
    m.sequence = sequence[connection]++;
    m.reader = ref;
    m.src = s.src;
    m.bytes = static_cast<std::uint64_t>(s.count()) * elemSize;
    // The data-ready wait: on the sender's program of the same channel (lowering_pairing.cc, pass 2).
    bool found = false;
    for (const StepRef& w : s.waits) {
      const RankProgram& wp = lp.programs[static_cast<std::size_t>(w.program)];
      if (wp.rank == from && wp.channel == prog.channel) {
        m.ready = w;
        found = true;
      }
    }
    if (!found)
      throw std::logic_error("planStaging: rank " + std::to_string(to) + "'s step " + std::to_string(ref.step) +
                             " reads rank " + std::to_string(from) + " without waiting for it");
    auto [last, fresh] = posted.try_emplace(connection, m.ready);
    if (!fresh && last->second.step < m.ready.step) last->second = m.ready;
    m.postAfter = last->second;
    m.sendOffset = sp.sendBytes[static_cast<std::size_t>(from)];
    m.recvOffset = sp.recvBytes[static_cast<std::size_t>(to)];
    sp.sendBytes[static_cast<std::size_t>(from)] += align(m.bytes);
    sp.recvBytes[static_cast<std::size_t>(to)] += align(m.bytes);
    const int index = static_cast<int>(sp.messages.size());
    sp.outgoing[static_cast<std::size_t>(from)].push_back(index);
    sp.incoming[static_cast<std::size_t>(to)].push_back(index);
    sp.byStep[static_cast<std::size_t>(ref.program)][static_cast<std::size_t>(ref.step)] = index;
    sp.messages.push_back(m);
  }
  return sp;
}

}  // namespace cclab::cuda
