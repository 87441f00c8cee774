// From a topology to the α, β, γ, δ of the closed forms (analytic.h), for one algorithm's pattern of
// concurrent messages: α is the largest route latency among its messages, β the largest per-message
// inverse bandwidth once every resource's bandwidth is shared by the messages that cross it at the
// same time (ring: all ring edges at once; trees: every edge of the tree(s) one way; rhd: one step's
// pairs at a time, the worst step). γ and δ come from the topology's compute parameters.
#pragma once

#include "collectives/plan/plan.h"
#include "sim/analytic.h"
#include "sim/topology.h"

namespace cclab::sim {

CostParams effectiveParams(const Topology& topo, plan::Collective c, plan::Algorithm a, int nranks);

// Hierarchical allreduce on a cluster topology: intra-node ring among a node's GPUs, inter-node
// messages with every GPU of a node sending at once (their share of the node's NICs).
HierarchicalParams hierarchicalParams(const Topology& topo);

// Prediction on a topology: effectiveParams then predict.
Micros predictOn(const Topology& topo, const Schedule& s);

}  // namespace cclab::sim
