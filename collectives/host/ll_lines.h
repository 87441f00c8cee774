// LL lines: the message format of the host's low-latency path (ll_executor.h), after NCCL's LL protocol.
//
// A connection (channel, from, to) is a ring of 64-byte lines, each of 8 units of 8 bytes; a unit is
// one 64-bit word holding 4 bytes of data (low half) and a 4-byte flag (high half). The sender writes
// a unit with one store, so the data and the flag that says it is there become visible together; the
// reader polls the unit itself (no posted counter, no second cache line). A message of B bytes takes
// ceil(B / 32) whole lines at the connection's head; the sender writes every unit of those lines
// (padding units carry zero data), so every unit of the ring is rewritten once per lap.
//
// Flags are sequence numbers of laps: the unit at absolute position u (units since the connection
// began) carries flag (u / ringUnits) mod P + 1, P the flag period (a power of two, 2 <= P <= 2^31). What a
// reader finds there before the sender rewrites it is the previous lap's flag, (or 0 before the first
// lap), never the one it waits for, so buffers are reused without resets; P only has to be >= 2, and
// tests force P = 2 to exercise the wrap.
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

#include "collectives/host/wait.h"

namespace cclab::host {

inline constexpr std::size_t kLlUnitsPerLine = 8;
inline constexpr std::size_t kLlDataBytesPerUnit = 4;
inline constexpr std::size_t kLlDataBytesPerLine = kLlUnitsPerLine * kLlDataBytesPerUnit;  // 32 of 64
inline constexpr std::uint32_t kLlMaxFlagPeriod = 0x80000000U;  // flags 1 .. 2^31; 0 = never written

struct alignas(64) LlLine {
  std::atomic<std::uint64_t> units[kLlUnitsPerLine];
};
static_assert(sizeof(LlLine) == 64 && std::atomic<std::uint64_t>::is_always_lock_free);

// Whole lines a message of `bytes` occupies (0 for an empty message).
constexpr std::int64_t llLinesFor(std::size_t bytes) {
  return static_cast<std::int64_t>((bytes + kLlDataBytesPerLine - 1) / kLlDataBytesPerLine);
}

class LlConnection {
 public:
  // ringLines a power of two in [1, 2^24]; flagPeriod a power of two in [2, 2^31] (a mask, not a division,
  // per unit). Throws InvalidArgument otherwise.
  LlConnection(std::int64_t ringLines, std::uint32_t flagPeriod);

  [[nodiscard]] std::int64_t ringLines() const { return lines_; }

  // ---- sender side (one thread) ----
  // Whether a message of `bytes` fits behind what the reader has not read yet (reloads acked when the
  // cached value says no). bytes must be at most ringLines() lines.
  bool hasRoom(std::size_t bytes);
  // Writes the message at the head (hasRoom() must have said yes) and advances the head.
  void write(const std::byte* src, std::size_t bytes);
  WaitWord& acked() { return acked_; }  // a sender waiting for room sleeps on it

  // ---- reader side (one thread) ----
  // Whether unit i of the next message is there; `data` gets its 4 data bytes when it is.
  bool unitReady(std::size_t i, std::uint32_t& data) const {
    const std::uint64_t u = tail_ + i;
    const std::uint64_t v = line(u).units[u % kLlUnitsPerLine].load(std::memory_order_acquire);
    data = static_cast<std::uint32_t>(v);
    return static_cast<std::uint32_t>(v >> 32) == flagAt(u);
  }
  // Ends the read of a message of `bytes` (all its units were ready): moves the tail past its lines
  // and publishes the new tail in acked.
  void finishRead(std::size_t bytes);
  WaitWord& bell() { return bell_; }  // a reader waiting for data sleeps on it

 private:
  [[nodiscard]] std::uint32_t flagAt(std::uint64_t unit) const {
    return static_cast<std::uint32_t>((unit >> ringShift_) & periodMask_) + 1;
  }
  [[nodiscard]] LlLine& line(std::uint64_t unit) const {
    return ring_[static_cast<std::size_t>((unit / kLlUnitsPerLine) & lineMask_)];
  }

  std::int64_t lines_;
  std::uint64_t ringUnits_;
  int ringShift_;          // ringUnits_ = 1 << ringShift_
  std::uint64_t lineMask_;  // lines_ - 1
  std::uint64_t periodMask_;  // flag period - 1
  std::unique_ptr<LlLine[]> ring_;
  WaitWord bell_;   // bumped when a message arrives and a reader sleeps
  WaitWord acked_;  // units read, mod 2^32 (written by the reader)
  struct alignas(64) SenderState {
    std::uint64_t head = 0;  // units written
    std::uint64_t room = 0;  // head may grow up to this without reloading acked
  } sender_;
  alignas(64) std::uint64_t tail_ = 0;  // units read (the reader's own copy)
};

}  // namespace cclab::host
