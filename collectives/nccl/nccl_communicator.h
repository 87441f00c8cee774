// The NCCL backend: the baseline users compare against, behind the same Communicator API.
//
// One NCCL communicator per rank from ncclCommInitAll over devices 0..K-1, each rank with its own
// stream. NCCL needs one device per rank: with more ranks than visible devices the factory throws
// cclab::Error("NCCL needs one device per rank ..."), so a benchmark can print N/A for that row.
// runGroup wraps the ranks' calls in ncclGroupStart/End; run() (one thread per rank) calls NCCL
// directly. NCCL picks its own algorithm (its NCCL_ALGO variable forces one); Avg is ncclAvg.
#pragma once

#include <memory>
#include <string>

#include "collectives/call/communicator_base.h"

namespace cclab::nccl {

// True when NCCL loads and a CUDA device is visible; otherwise false with the reason.
bool ncclAvailable(std::string* why = nullptr);

std::unique_ptr<Communicator> makeNcclCommunicator(const CommConfig& config);

}  // namespace cclab::nccl
