// The Communicator API: one interface for every backend (host threads, processes, CUDA, NCCL), with
// MPI/NCCL semantics, and the factory that makes a backend's communicator.
//
// What a call says and how it is counted: collectives/call/vocabulary.h. The interface itself:
// collectives/call/communicator_base.h. This header is the top of the collectives: tools, the
// trainer and the tests include it; no backend or executor does (tests/scripts/test_layering.py).
#pragma once

#include <memory>
#include <string>

#include "collectives/call/communicator_base.h"
#include "collectives/call/vocabulary.h"
#include "collectives/core/dtype.h"
#include "collectives/core/errors.h"
#include "collectives/core/straggler.h"
#include "collectives/plan/plan.h"

namespace cclab {

bool backendAvailable(Backend b, std::string* why = nullptr);
// Throws InvalidArgument (bad nranks) or Error (backend not built or no device), with the reason.
// Reads the backends' CCLAB_* knobs (collectives/core/knobs.h) that shape a communicator.
std::unique_ptr<Communicator> makeCommunicator(Backend b, const CommConfig& config);

}  // namespace cclab
