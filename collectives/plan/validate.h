// Validation of a Plan, independent of any executor:
//  - structure: peers, phases (non-decreasing per rank), ranges inside their buffers;
//  - structure of channels: a rank's ops channel by channel, phases non-decreasing inside each;
//  - connections: the k-th send from a to b on a channel and the k-th receive at b from a on it (a
//    ReduceAll receives from every rank) have the same count and phase, and no send is left unmatched;
//  - phase deps: two different channels, an earlier phase;
//  - channels are disjoint: no two channels of a rank touch the same element where one writes it,
//    unless phase deps order the two (a chain of deps and phase order from one to the other);
//  - pipelining: inside a phase, ops of one rank that touch the same elements start at the same
//    element (so slice-major execution keeps every dependency), out of place and in place;
//  - result: a symbolic run (interpret.h) in which every element is the multiset of input elements
//    combined into it; every output element must hold each expected contribution exactly once, with
//    whole ops and with small slices, with a connection of capacity one, out of place and in place,
//    with channels interleaved and (for several channels) one after the other (sequentialOps).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/plan/plan.h"

namespace cclab::plan {

struct ValidateOptions {
  bool symbolic = true;  // run the symbolic check (cost grows with count x nranks^2)
  std::vector<std::int64_t> sliceElems = {0, 1, 3};
};

// Every problem found, one line each; empty when the plan is valid.
std::vector<std::string> validate(const Plan& plan, const ValidateOptions& options = {});

}  // namespace cclab::plan
