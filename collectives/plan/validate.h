// Validation of a Plan, independent of any executor:
//  - structure: peers, phases (non-decreasing per rank), ranges inside their buffers;
//  - channels: the k-th send from a to b and the k-th receive at b from a have the same count and
//    phase, and no send is left unmatched;
//  - pipelining: inside a phase, ops of one rank that touch the same elements start at the same
//    element (so slice-major execution keeps every dependency), out of place and in place;
//  - result: a symbolic run (interpret.h) in which every element is the multiset of input elements
//    combined into it; every output element must hold each expected contribution exactly once, with
//    whole ops and with small slices, with a channel of capacity one, out of place and in place.
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
