// From a topology to the α, β, γ, δ of the closed forms (analytic.h), for one algorithm's pattern of
// concurrent messages: α is the largest route latency among its messages, β the largest per-message
// inverse bandwidth once every resource's bandwidth is shared by the messages that cross it at the
// same time (ring: all ring edges at once; trees: every edge of the tree(s) one way; rhd: one step's
// pairs at a time, the worst step). γ and δ come from the topology's compute parameters.
#pragma once

#include "collectives/plan/plan.h"
#include "sim/analytic.h"
#include "sim/protocol.h"
#include "sim/topology.h"

namespace cclab::sim {

// With shape.channels = C the pattern is every channel's at once (rings in plan::ringOrder(c), the
// others the same pattern C times; the double binary tree's two trees C/2 times each), and the
// closed form is run on one channel's part (predictOn). k.startup is compute.launch_us; a message of
// the pattern that crosses a NIC has compute.proxy_us in its latency (α), as in the replay.
CostParams effectiveParams(const Topology& topo, plan::Collective c, plan::Algorithm a, int nranks,
                           plan::PlanShape shape = {});

// The parameters of a call whose messages all take protocol p (protocol.h): LL multiplies β by
// 1/kLLEfficiency, LL128 β by 1/kLL128Efficiency and α by kLL128LatencyTraversals, Simple α by
// kSimpleLatencyTraversals; None leaves them. The replay applies the
// same to every message, so a closed form that equals the replay equals it under each protocol.
CostParams withProtocol(CostParams k, Protocol p);

// Hierarchical allreduce on a cluster topology: intra-node ring among a node's GPUs, inter-node
// messages with every GPU of a node sending at once (their share of the node's NICs), each link
// shared by `channels` channels.
HierarchicalParams hierarchicalParams(const Topology& topo, int channels = 1);

// Prediction on a topology: effectiveParams, then predict on one channel's part of the data, under
// each protocol the choice tries (protocolCandidates); the fastest, with its protocol.
Prediction predictOn(const Topology& topo, const Schedule& s, plan::PlanShape shape = {},
                     ProtocolChoice protocol = ProtocolChoice::Auto);
// The same with the parameters already known (`k`: effectiveParams of the schedule's collective,
// algorithm, ranks and shape), so that predictions of many sizes route the pattern once.
Prediction predictOn(const Topology& topo, const CostParams& k, const Schedule& s, plan::PlanShape shape,
                     ProtocolChoice protocol);

}  // namespace cclab::sim
