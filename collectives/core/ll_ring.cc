// LlRing (ll_ring.h): writing and reading flagged lines.
#include "collectives/core/ll_ring.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "collectives/core/errors.h"

namespace cclab {

std::int64_t llAffordableLines(int nranks, std::size_t budgetBytes) {
  const auto p = static_cast<std::size_t>(std::max(nranks, 1));
  return static_cast<std::int64_t>(std::bit_floor(std::max<std::size_t>(budgetBytes / (p * p * sizeof(LlLine)), 1)));
}

void LlRing::check(std::int64_t ringLines, std::uint32_t flagPeriod) {
  if (ringLines < 1 || ringLines > kLlMaxRingLinesLimit || !std::has_single_bit(static_cast<std::uint64_t>(ringLines)))
    throw InvalidArgument("LL connection: ring of " + std::to_string(ringLines) +
                          " lines (need a power of two in [1, 2^24])");
  if (flagPeriod < 2 || !std::has_single_bit(flagPeriod) || flagPeriod > kLlMaxFlagPeriod)
    throw InvalidArgument("LL connection: flag period " + std::to_string(flagPeriod) +
                          " (need a power of two in [2, 2^31])");
}

LlRing::LlRing(LlLine* lines, std::int64_t ringLines, std::uint32_t flagPeriod) {
  check(ringLines, flagPeriod);
  lines_ = lines;
  ringShift_ = std::countr_zero(static_cast<std::uint64_t>(ringLines) * kLlUnitsPerLine);
  lineMask_ = static_cast<std::uint64_t>(ringLines) - 1;
  periodMask_ = std::uint64_t{flagPeriod} - 1;
}

std::uint64_t LlRing::write(std::uint64_t head, const std::byte* src, std::size_t bytes) const {
  const std::int64_t lines = llLinesFor(bytes);
  std::uint64_t u = head;
  std::size_t done = 0;
  for (std::int64_t l = 0; l < lines; ++l, u += kLlUnitsPerLine) {
    const std::uint64_t flag = std::uint64_t{flagAt(u)} << 32;
    LlLine& dst = line(u);
    // The last line's padding units (past the message's last unit) first: the reader polls the last
    // data unit, and once it sees it, it takes the line; a padding store still queued behind it would
    // have to take the line back (one more cache-line transfer on the sender's side per message).
    const std::size_t dataUnits =
        std::min<std::size_t>(kLlUnitsPerLine, (bytes - done + kLlDataBytesPerUnit - 1) / kLlDataBytesPerUnit);
    for (std::size_t j = dataUnits; j < kLlUnitsPerLine; ++j) dst.units[j].store(flag, std::memory_order_release);
    for (std::size_t j = 0; j < dataUnits; ++j, done += kLlDataBytesPerUnit) {
      std::uint32_t data = 0;
      if (done + kLlDataBytesPerUnit <= bytes)
        std::memcpy(&data, src + done, kLlDataBytesPerUnit);  // constant size: one load
      else
        for (std::size_t b = 0; b < bytes - done; ++b) data |= std::uint32_t{std::to_integer<std::uint8_t>(src[done + b])} << (8 * b);
      dst.units[j].store(flag | data, std::memory_order_release);
    }
    done = std::min(done, bytes);
  }
  return u;
}

bool LlRing::tryRead(std::uint64_t tail, std::byte* dst, std::size_t bytes) const {
  if (bytes == 0) return true;
  const std::size_t units = (bytes + kLlDataBytesPerUnit - 1) / kLlDataBytesPerUnit;
  std::uint32_t data = 0;
  if (!unitReady(tail + units - 1, data)) return false;
  const std::size_t full = bytes / kLlDataBytesPerUnit;
  for (std::size_t i = 0; i < units; ++i) {
    if (!unitReady(tail + i, data)) return false;  // cannot happen after the last one (in-order writes)
    if (i < full)
      std::memcpy(dst + i * kLlDataBytesPerUnit, &data, kLlDataBytesPerUnit);  // constant size: one store
    else
      std::memcpy(dst + i * kLlDataBytesPerUnit, &data, bytes - i * kLlDataBytesPerUnit);
  }
  return true;
}

}  // namespace cclab
