// Building a C-channel plan from a one-channel generator (internal to collectives/plan; see channels.cc).
#pragma once

#include <functional>
#include <vector>

#include "collectives/plan/plan.h"

namespace cclab::plan {

// The one-channel plan of channel `channel` over `count` elements, with the root at position `root`.
// makePlan's checks of its arguments (nranks, count, root, generator, ranksPerNode; the channel count
// is checked by splitIntoChannels); makeOpSource runs the same ones.
void checkPlanArguments(Collective c, Algorithm a, int nranks, std::int64_t count, int root, PlanShape shape);

using ChannelGenerator = std::function<Plan(int channel, std::int64_t count, int root)>;
// Channel c's rank order (position -> rank); empty function: the identity.
using ChannelOrder = std::function<std::vector<int>(int channel)>;

Plan splitIntoChannels(Collective c, Algorithm a, int nranks, std::int64_t count, int root, int channels,
                       const ChannelGenerator& generate, const ChannelOrder& orderOf = {});

}  // namespace cclab::plan
