// LlConnection (ll_lines.h): writing and reading flagged lines, and the ring's flow control.
#include "collectives/host/ll_lines.h"

#include <bit>
#include <string>

#include "collectives/core/errors.h"

namespace cclab::host {
namespace {
constexpr std::int64_t kMaxRingLines = std::int64_t{1} << 24;  // ring units stay far below 2^31 (acked is mod 2^32)
}  // namespace

LlConnection::LlConnection(std::int64_t ringLines, std::uint32_t flagPeriod)
    : lines_(ringLines), ringUnits_(static_cast<std::uint64_t>(ringLines) * kLlUnitsPerLine),
      periodMask_(std::uint64_t{flagPeriod} - 1) {
  if (ringLines < 1 || ringLines > kMaxRingLines || !std::has_single_bit(static_cast<std::uint64_t>(ringLines)))
    throw InvalidArgument("LL connection: ring of " + std::to_string(ringLines) +
                          " lines (need a power of two in [1, 2^24])");
  if (flagPeriod < 2 || !std::has_single_bit(flagPeriod) || flagPeriod > kLlMaxFlagPeriod)
    throw InvalidArgument("LL connection: flag period " + std::to_string(flagPeriod) +
                          " (need a power of two in [2, 2^31])");
  ringShift_ = std::countr_zero(ringUnits_);
  lineMask_ = static_cast<std::uint64_t>(ringLines) - 1;
  ring_ = std::make_unique<LlLine[]>(static_cast<std::size_t>(ringLines));
  for (std::int64_t l = 0; l < ringLines; ++l)
    for (auto& u : ring_[static_cast<std::size_t>(l)].units) u.store(0, std::memory_order_relaxed);
  sender_.room = ringUnits_;
}

bool LlConnection::hasRoom(std::size_t bytes) {
  const std::uint64_t end = sender_.head + static_cast<std::uint64_t>(llLinesFor(bytes)) * kLlUnitsPerLine;
  if (end <= sender_.room) return true;
  // The reader's tail from its 32-bit count: it is at most a ring behind the head.
  const std::uint32_t acked = acked_.value.load(std::memory_order_acquire);
  const std::uint64_t tail = sender_.head - static_cast<std::uint32_t>(static_cast<std::uint32_t>(sender_.head) - acked);
  sender_.room = tail + ringUnits_;
  return end <= sender_.room;
}

void LlConnection::write(const std::byte* src, std::size_t bytes) {
  const std::int64_t lines = llLinesFor(bytes);
  std::uint64_t u = sender_.head;
  std::size_t done = 0;
  for (std::int64_t l = 0; l < lines; ++l, u += kLlUnitsPerLine) {
    const std::uint64_t flag = std::uint64_t{flagAt(u)} << 32;
    LlLine& dst = line(u);
    for (std::size_t j = 0; j < kLlUnitsPerLine; ++j, done += kLlDataBytesPerUnit) {
      std::uint32_t data = 0;
      if (done + kLlDataBytesPerUnit <= bytes)
        std::memcpy(&data, src + done, kLlDataBytesPerUnit);  // constant size: one load
      else if (done < bytes)
        for (std::size_t b = 0; b < bytes - done; ++b) data |= std::uint32_t{std::to_integer<std::uint8_t>(src[done + b])} << (8 * b);
      dst.units[j].store(flag | data, std::memory_order_release);
    }
  }
  sender_.head = u;
}

void LlConnection::finishRead(std::size_t bytes) {
  tail_ += static_cast<std::uint64_t>(llLinesFor(bytes)) * kLlUnitsPerLine;
  acked_.value.store(static_cast<std::uint32_t>(tail_), std::memory_order_release);
}

}  // namespace cclab::host
