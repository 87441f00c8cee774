// The CUDA backend: K ranks over D visible devices (device_map.h), each rank with its own stream and
// buffers; the plan of each call is lowered to GPU steps (lowering.h) and ordered by events, a CUDA
// graph or a persistent low-latency kernel (ordering.h), chosen by CommConfig::order.
//
// run() (per rank, one thread per rank) meets the other ranks (rendezvous.h) and returns once the
// whole group is enqueued; runGroup() enqueues directly. Both return before the GPU is done:
// synchronize() waits (bounded by the last call's timeout) and reports device-side timeouts.
// Avg reduces as Sum and divides at the end, like the host backend.
#pragma once

#include <memory>
#include <string>

#include "collectives/call/communicator_base.h"

namespace cclab::cuda {

// True when a CUDA device is visible; otherwise false with the reason in *why.
bool cudaAvailable(std::string* why = nullptr);

// Throws Error when no device is visible, InvalidArgument for a bad config.
std::unique_ptr<Communicator> makeCudaCommunicator(const CommConfig& config);

}  // namespace cclab::cuda
