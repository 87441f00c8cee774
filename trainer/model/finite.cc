#include "trainer/model/finite.h"

#include <algorithm>
#include <bit>
#include <cstdint>

namespace cclab::trainer {

bool allFinite(std::span<const float> values) {
  // A float is inf or nan exactly when its exponent bits are all ones: |bits| >= 0x7f800000.
  constexpr std::uint32_t kAbsMask = 0x7fffffffU;
  constexpr std::uint32_t kInfinityBits = 0x7f800000U;
  std::uint32_t largest = 0;
  for (const float v : values) largest = std::max(largest, std::bit_cast<std::uint32_t>(v) & kAbsMask);
  return largest < kInfinityBits;
}

}  // namespace cclab::trainer
