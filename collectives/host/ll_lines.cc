// LlConnection (ll_lines.h): a heap ring of flagged lines, an LlLink.
#include "collectives/host/ll_lines.h"

namespace cclab::host {

LlConnection::LlConnection(std::int64_t ringLines, std::uint32_t flagPeriod) {
  LlRing::check(ringLines, flagPeriod);  // before allocating
  lines_ = std::make_unique<LlLine[]>(static_cast<std::size_t>(ringLines));
  for (std::int64_t l = 0; l < ringLines; ++l)
    for (auto& u : lines_[static_cast<std::size_t>(l)].units) u.store(0, std::memory_order_relaxed);
  static_cast<LlLink&>(*this) = LlLink(LlRing(lines_.get(), ringLines, flagPeriod), &bell_, &acked_);
}

}  // namespace cclab::host
