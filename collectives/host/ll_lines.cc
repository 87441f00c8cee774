// LlConnection (ll_lines.h): a heap ring of flagged lines and its flow control.
#include "collectives/host/ll_lines.h"

namespace cclab::host {

LlConnection::LlConnection(std::int64_t ringLines, std::uint32_t flagPeriod) {
  LlRing::check(ringLines, flagPeriod);  // before allocating
  lines_ = std::make_unique<LlLine[]>(static_cast<std::size_t>(ringLines));
  for (std::int64_t l = 0; l < ringLines; ++l)
    for (auto& u : lines_[static_cast<std::size_t>(l)].units) u.store(0, std::memory_order_relaxed);
  ring_ = LlRing(lines_.get(), ringLines, flagPeriod);
  sender_.room = ring_.ringUnits();
}

bool LlConnection::hasRoom(std::size_t bytes) {
  const std::uint64_t end = sender_.head + llUnitsFor(bytes);
  if (end <= sender_.room) return true;
  const std::uint32_t acked = acked_.value.load(std::memory_order_acquire);
  sender_.room = llTailFromAcked(sender_.head, acked) + ring_.ringUnits();
  return end <= sender_.room;
}

void LlConnection::finishRead(std::size_t bytes) {
  tail_ += llUnitsFor(bytes);
  acked_.value.store(static_cast<std::uint32_t>(tail_), std::memory_order_release);
}

}  // namespace cclab::host
