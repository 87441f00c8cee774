// LL lines: the host's connections for its low-latency path (ll_executor.h): a ring in the line
// format of collectives/core/ll_ring.h (flag in the data, lap numbers as flags, whole lines per
// message) between one sending and one reading thread.
//
// The flow control is LlLink's (ll_ring.h). A waiter that sleeps (after spinning and yielding) counts
// itself in the word's sleepers: `bell` for a reader waiting for data, `acked` for a sender waiting for
// room; whoever makes it ready wakes it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "collectives/core/ll_ring.h"
#include "collectives/host/wait.h"

namespace cclab::host {

using cclab::kLlDataBytesPerLine;
using cclab::kLlDataBytesPerUnit;
using cclab::kLlMaxFlagPeriod;
using cclab::kLlUnitsPerLine;
using cclab::llLinesFor;
using cclab::LlLine;
using cclab::LlLink;

// A connection: an LlLink (collectives/core/ll_ring.h) that owns its lines (on the heap) and its words.
class LlConnection : public LlLink<WaitWord> {
 public:
  // ringLines a power of two in [1, 2^24]; flagPeriod a power of two in [2, 2^31] (a mask, not a division,
  // per unit). Throws InvalidArgument otherwise.
  LlConnection(std::int64_t ringLines, std::uint32_t flagPeriod);
  LlConnection(const LlConnection&) = delete;
  LlConnection& operator=(const LlConnection&) = delete;

  [[nodiscard]] std::int64_t ringLines() const { return ring().ringLines(); }

 private:
  std::unique_ptr<LlLine[]> lines_;
  WaitWord bell_;   // bumped when a message arrives and a reader sleeps
  WaitWord acked_;  // units read, mod 2^32 (written by the reader)
};

}  // namespace cclab::host
