// The CUDA backend's pipeline slice (plan.h: ops cut into slices, run slice-major in a phase).
//
// Ranks on one device share its memory system; slicing would only add launches (each slice is a
// kernel in the events ordering), so by default every op is one step. Ranks on several devices
// pipeline: a ring step forwards slice s while slice s+1 crosses the link, NCCL-style, with
// kCrossDeviceSliceBytes slices (NCCL's ring uses chunks of this order for large messages).
// A slice size the caller asks for (CollectiveOptions::sliceBytes) always wins. Pure, CPU-tested.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cclab::cuda {

inline constexpr std::size_t kCrossDeviceSliceBytes = std::size_t{4} << 20;

// Slice in elements for a call; 0 means "whole ops".
std::int64_t sliceElemsFor(std::size_t requestedBytes, std::size_t elemSize, int devicesUsed);

}  // namespace cclab::cuda
