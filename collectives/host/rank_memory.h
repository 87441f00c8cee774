// A rank's three buffers in host memory, as the plan names them (plan::Buf), for the executors that
// run plans on host memory (host_executor.h, ll_executor.h, and the process backend's
// collectives/mpi/mpi_executor.h, collectives/proc/shm_executor.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/plan/plan.h"

namespace cclab::host {

struct RankMemory {
  const std::byte* input = nullptr;
  std::byte* output = nullptr;
  std::byte* scratch = nullptr;

  // Where element `lo` of range `r` lies, for elements of `elemSize` bytes. The input is only read
  // through the pointer returned for it.
  [[nodiscard]] std::byte* at(const plan::Range& r, std::int64_t lo, std::size_t elemSize) const {
    const auto off = static_cast<std::size_t>(r.offset + lo) * elemSize;
    switch (r.buf) {
      case plan::Buf::Input: return const_cast<std::byte*>(input) + off;
      case plan::Buf::Output: return output + off;
      case plan::Buf::Scratch: return scratch + off;
    }
    return nullptr;
  }
};

}  // namespace cclab::host
