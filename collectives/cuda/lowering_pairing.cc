// Plan lowering, pass 2: pairing sends with receives (lowering_state.h lists the passes).
// Pass 1 recorded every sent slice and every receiving step per connection (channel, from, to); a
// connection delivers in order, so the k-th send pairs with the k-th receive (FIFO), as in the plan
// interpreter. The pair fixes what the receiving step reads (the sent range, on the sender) and when
// it may start (data ready: after the sending program's step before the send, or its start), and is
// recorded for pass 3, which must keep the sender from overwriting the range before it is read.
// Connections whose two sides disagree (slice counts, slice lengths) are refused.
#include <stdexcept>
#include <string>

#include "collectives/cuda/lowering_state.h"

namespace cclab::cuda::lowering {

void pairSendsWithReceives(LoweringState& s) {
  s.sent.resize(s.out.programs.size());
  for (const auto& [key, list] : s.sends) {
    const auto [channel, from, to] = key;
    auto it = s.receives.find(key);
    const std::size_t got = it == s.receives.end() ? 0 : it->second.size();
    if (got != list.size())
      throw std::logic_error("lowerPlan: rank " + std::to_string(from) + " sends " + std::to_string(list.size()) +
                             " slices to rank " + std::to_string(to) + " on channel " + std::to_string(channel) +
                             ", which receives " + std::to_string(got));
    for (std::size_t k = 0; k < list.size(); ++k) {
      const SendRecord& snd = list[k];
      const StepRef reader = it->second[k];
      Step& step = s.step(reader);
      if (step.count() != snd.src.count)
        throw std::logic_error("lowerPlan: rank " + std::to_string(to) + " expects " + std::to_string(step.count()) +
                               " elements, rank " + std::to_string(from) + " sends " + std::to_string(snd.src.count));
      step.src = snd.src;
      addWait(step.waits, {snd.program, snd.position - 1});
      at(s.sent, snd.program).push_back({snd.position, snd.src, reader, snd.program, {}});
    }
  }
  for (const auto& [key, list] : s.receives)
    if (!s.sends.contains(key))
      throw std::logic_error("lowerPlan: rank " + std::to_string(std::get<2>(key)) + " receives " +
                             std::to_string(list.size()) + " slices from rank " + std::to_string(std::get<1>(key)) +
                             ", which sends none");
}

}  // namespace cclab::cuda::lowering
