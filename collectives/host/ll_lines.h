// LL lines: the host's connections for its low-latency path (ll_executor.h): a ring in the line
// format of collectives/core/ll_ring.h (flag in the data, lap numbers as flags, whole lines per
// message) between one sending and one reading thread.
//
// The reader publishes how far it has read (acked, a 32-bit unit count, mod 2^32) after each message;
// the sender reads it only when the ring might be full (cached otherwise), so on the fast path a
// message costs the reader one cache-line transfer and nothing else.
// A waiter that sleeps (after spinning and yielding) counts itself in the word's sleepers: `bell` for a
// reader waiting for data, `acked` for a sender waiting for room; whoever makes it ready wakes it.
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

class LlConnection {
 public:
  // ringLines a power of two in [1, 2^24]; flagPeriod a power of two in [2, 2^31] (a mask, not a division,
  // per unit). Throws InvalidArgument otherwise.
  LlConnection(std::int64_t ringLines, std::uint32_t flagPeriod);

  [[nodiscard]] std::int64_t ringLines() const { return ring_.ringLines(); }

  // ---- sender side (one thread) ----
  // Whether a message of `bytes` fits behind what the reader has not read yet (reloads acked when the
  // cached value says no). bytes must be at most ringLines() lines.
  bool hasRoom(std::size_t bytes);
  // Writes the message at the head (hasRoom() must have said yes) and advances the head.
  void write(const std::byte* src, std::size_t bytes) { sender_.head = ring_.write(sender_.head, src, bytes); }
  WaitWord& acked() { return acked_; }  // a sender waiting for room sleeps on it

  // ---- reader side (one thread) ----
  // Whether unit i of the next message is there; `data` gets its 4 data bytes when it is.
  bool unitReady(std::size_t i, std::uint32_t& data) const { return ring_.unitReady(tail_ + i, data); }
  // Starts fetching the line of unit i of the next message (a hint).
  void prefetchUnit(std::size_t i) const { ring_.prefetch(tail_ + i); }
  // Ends the read of a message of `bytes` (all its units were ready): moves the tail past its lines
  // and publishes the new tail in acked.
  void finishRead(std::size_t bytes);
  WaitWord& bell() { return bell_; }  // a reader waiting for data sleeps on it

 private:
  std::unique_ptr<LlLine[]> lines_;
  LlRing ring_;
  WaitWord bell_;   // bumped when a message arrives and a reader sleeps
  WaitWord acked_;  // units read, mod 2^32 (written by the reader)
  struct alignas(64) SenderState {
    std::uint64_t head = 0;  // units written
    std::uint64_t room = 0;  // head may grow up to this without reloading acked
  } sender_;
  alignas(64) std::uint64_t tail_ = 0;  // units read (the reader's own copy)
};

}  // namespace cclab::host
