// How a GPU test behaves without a device. By default it skips with the reason (a CPU-only machine
// runs every other test). Where a GPU is expected — scripts/gpu_check sets CCLAB_EXPECT_GPU=1 — a
// missing device or NCCL is a FAILURE that names the reason, so a check on a GPU machine can never
// pass on tests that did not run.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "collectives/communicator.h"
#include "collectives/core/knobs.h"

namespace cclab::testing {

inline bool gpuExpected() { return knobs::flag(knobs::Id::ExpectGpu).value_or(false); }

// The bound on every wait inside a GPU test's collective: CCLAB_GPU_TEST_TIMEOUT_MS when set (scripts/gpu_check
// sets a few seconds, so a hang costs seconds, not the 20 s default per test case), else 20 s. A value
// that is not a whole number of milliseconds in [1, 1 day] fails the test, naming it.
inline std::chrono::milliseconds gpuTestTimeout() {
  constexpr long long kDefaultMs = 20000, kMaxMs = 86400000;
  const char* v = std::getenv("CCLAB_GPU_TEST_TIMEOUT_MS");
  if (v == nullptr || *v == '\0') return std::chrono::milliseconds(kDefaultMs);
  char* end = nullptr;
  const long long ms = std::strtoll(v, &end, 10);
  if (*end != '\0' || ms < 1 || ms > kMaxMs) {
    ADD_FAILURE() << "CCLAB_GPU_TEST_TIMEOUT_MS='" << v << "' is not a whole number of milliseconds in [1, " << kMaxMs
                  << "]; using " << kDefaultMs;
    return std::chrono::milliseconds(kDefaultMs);
  }
  return std::chrono::milliseconds(ms);
}

// Options whose waits are bounded by gpuTestTimeout().
inline CollectiveOptions gpuTestOptions() {
  CollectiveOptions o;
  o.timeout = gpuTestTimeout();
  return o;
}

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
