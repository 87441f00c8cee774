#include "collectives/cuda/drain_bound.h"

#include <algorithm>

namespace cclab::cuda {

std::chrono::nanoseconds llGracePeriod(std::chrono::milliseconds timeout) {
  const auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(0, std::chrono::nanoseconds(timeout).count()));
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::max(ns / kLlGraceDivisor, kLlMinGraceNs)));
}

std::chrono::nanoseconds llReportBound(std::chrono::milliseconds timeout) {
  return std::chrono::nanoseconds(std::max<std::chrono::milliseconds>(timeout, std::chrono::milliseconds(0))) +
         kLlReportLevels * llGracePeriod(timeout);
}

std::chrono::milliseconds drainBound(std::chrono::milliseconds timeout, std::chrono::microseconds stragglerDelay,
                                     std::int64_t calls) {
  using std::chrono::milliseconds;
  const milliseconds cap = kMaxDrainBound;
  // Per call, rounded up to whole milliseconds; long double keeps a huge product from wrapping.
  const auto perCallNs = llReportBound(timeout) + std::chrono::nanoseconds(std::max(stragglerDelay, std::chrono::microseconds(0)));
  const std::int64_t perCallMs = (perCallNs.count() + 999999) / 1000000;
  const long double total = static_cast<long double>(std::max<std::int64_t>(calls, 1)) * static_cast<long double>(perCallMs) +
                            static_cast<long double>(kDrainMargin.count());
  if (total >= static_cast<long double>(cap.count())) return cap;
  return milliseconds(static_cast<std::int64_t>(total));
}

}  // namespace cclab::cuda
