// How a GPU test behaves without a device. By default it skips with the reason (a CPU-only machine
// runs every other test). Where a GPU is expected — scripts/gpu_check sets CCLAB_EXPECT_GPU=1 — a
// missing device or NCCL is a FAILURE that names the reason, so a check on a GPU machine can never
// pass on tests that did not run.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "collectives/communicator.h"
#include "collectives/core/knobs.h"

namespace cclab::testing {

inline bool gpuExpected() { return knobs::flag(knobs::Id::ExpectGpu).value_or(false); }

}  // namespace cclab::testing

// Skips (or, under CCLAB_EXPECT_GPU=1, fails) the current test when `backend` cannot run here.
#define CCLAB_REQUIRE_BACKEND(backend, what)                                                          \
  do {                                                                                                \
    std::string why_;                                                                                 \
    if (!::cclab::backendAvailable(backend, &why_)) {                                                 \
      if (::cclab::testing::gpuExpected())                                                            \
        FAIL() << what << " expected (CCLAB_EXPECT_GPU=1) but unavailable: " << why_;                 \
      GTEST_SKIP() << what << " test skipped: " << why_;                                              \
    }                                                                                                 \
  } while (false)

#define CCLAB_REQUIRE_GPU() CCLAB_REQUIRE_BACKEND(::cclab::Backend::Cuda, "GPU")
#define CCLAB_REQUIRE_NCCL() CCLAB_REQUIRE_BACKEND(::cclab::Backend::Nccl, "NCCL")
