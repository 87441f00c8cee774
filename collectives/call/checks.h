// The checks every backend makes on a call before it runs it (PlannedCall makes them for the backends
// that run plans; NCCL calls checkArgs itself). Each throws InvalidArgument with one line.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/call/vocabulary.h"
#include "collectives/plan/plan.h"

namespace cclab {

// Throws InvalidArgument when args do not fit (negative count, root out of range, an algorithm the
// collective has no generator for, a rank out of range).
void checkArgs(const CollectiveArgs& args, int nranks, plan::Algorithm resolved);
// Throws InvalidArgument (one line) when options.channels is outside 0..plan::kMaxChannels,
// options.ranksPerNode is negative, or hier's ranksPerNode does not divide nranks.
void checkShape(const CollectiveOptions& options, int nranks, plan::Algorithm resolved);

// Most slices one call may cut a rank's largest buffer into. Every slice costs a handshake (about
// 100 ns on the host, a launch or an event on a GPU) and, on the CUDA backend, a lowered step held in
// memory, so a slice far smaller than the message turns one call into minutes of handshakes and
// gigabytes of steps (`--slice 1` on 1 GiB: 2^28 slices). 2^20 slices still let a 1 GiB message use
// 1 KiB slices; the default slices (256 KiB) reach the limit only beyond 256 GiB.
inline constexpr std::int64_t kMaxSlicesPerCall = std::int64_t{1} << 20;
// Throws InvalidArgument when `sliceBytes` (0: the backend's default, `defaultSliceBytes`) cuts the
// call's largest buffer into more than kMaxSlicesPerCall slices. Every backend calls it.
void checkSlicing(const CollectiveArgs& args, int nranks, std::size_t sliceBytes, std::size_t defaultSliceBytes);

}  // namespace cclab
