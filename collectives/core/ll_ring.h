// The LL line format (after NCCL's low-latency protocol), shared by the host's LL path
// (collectives/host/ll_lines.h: threads) and the process backend's (collectives/proc/shm_ll.h: a ring
// in a shared segment), as the futex primitive is shared by their waits.
//
// A ring is a power of two of 64-byte lines, each of 8 units of 8 bytes; a unit is one 64-bit word
// holding 4 bytes of data (low half) and a 4-byte flag (high half). The sender writes a unit with one
// store, so the data and the flag that says it is there become visible together; the reader polls the
// unit itself (no posted counter, no second cache line). A message of B bytes takes ceil(B / 32)
// whole lines at the ring's head; every unit of those lines is written (padding units carry zero
// data), so every unit of the ring is rewritten once per lap.
//
// Flags are sequence numbers of laps: the unit at absolute position u (units since the ring began)
// carries flag (u / ringUnits) mod P + 1, P the flag period (a power of two, 2 <= P <= 2^31). What a
// reader finds there before the sender rewrites it is the previous lap's flag (or 0 before the first
// lap), never the one it waits for, so a ring is reused without resets; tests force P = 2.
//
// LlRing is the format only, over lines it does not own (heap or shared memory, zero-filled before the
// first use); LlLink adds the positions (the sender's head, the reader's tail, in units) and the flow
// control, over two words wherever they live (futex.h: private words for threads, shared ones for
// processes).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cclab {

inline constexpr std::size_t kLlUnitsPerLine = 8;
inline constexpr std::size_t kLlDataBytesPerUnit = 4;
inline constexpr std::size_t kLlDataBytesPerLine = kLlUnitsPerLine * kLlDataBytesPerUnit;  // 32 of 64
inline constexpr std::uint32_t kLlMaxFlagPeriod = 0x80000000U;  // flags 1 .. 2^31; 0 = never written
inline constexpr std::int64_t kLlMaxRingLinesLimit = std::int64_t{1} << 24;  // units stay far below 2^31

struct alignas(64) LlLine {
  std::atomic<std::uint64_t> units[kLlUnitsPerLine];
};
static_assert(sizeof(LlLine) == 64 && std::atomic<std::uint64_t>::is_always_lock_free);

// Whole lines a message of `bytes` occupies (0 for an empty message).
constexpr std::int64_t llLinesFor(std::size_t bytes) {
  return static_cast<std::int64_t>((bytes + kLlDataBytesPerLine - 1) / kLlDataBytesPerLine);
}
// Units a message of `bytes` advances a position by (whole lines).
constexpr std::uint64_t llUnitsFor(std::size_t bytes) {
  return static_cast<std::uint64_t>(llLinesFor(bytes)) * kLlUnitsPerLine;
}
// Lines per ring when nranks^2 rings share `budgetBytes`: the largest power of two that fits (>= 1);
// each path clamps it to its own range.
std::int64_t llAffordableLines(int nranks, std::size_t budgetBytes);

class LlRing {
 public:
  LlRing() = default;
  // ringLines a power of two in [1, 2^24]; flagPeriod a power of two in [2, 2^31]. Throws
  // InvalidArgument otherwise. `lines` must hold ringLines lines.
  LlRing(LlLine* lines, std::int64_t ringLines, std::uint32_t flagPeriod);
  // Throws InvalidArgument "LL connection: ..." unless (ringLines, flagPeriod) are valid.
  static void check(std::int64_t ringLines, std::uint32_t flagPeriod);

  [[nodiscard]] std::int64_t ringLines() const { return static_cast<std::int64_t>(lineMask_ + 1); }
  [[nodiscard]] std::uint64_t ringUnits() const { return std::uint64_t{1} << ringShift_; }

  // Writes a message of `bytes` from src at `head` (units) with release stores, its data units in order
  // and last (the padding units of its last line before them); returns the head after it. The caller
  // has made sure the reader is done with those lines.
  std::uint64_t write(std::uint64_t head, const std::byte* src, std::size_t bytes) const;
  // Starts fetching the line of the unit at absolute position u (a hint: no wait, no effect on data).
  void prefetch(std::uint64_t u) const { __builtin_prefetch(&line(u)); }
  // Whether the unit at absolute position u is written (this lap); `data` gets its 4 data bytes.
  bool unitReady(std::uint64_t u, std::uint32_t& data) const {
    const std::uint64_t v = line(u).units[u % kLlUnitsPerLine].load(std::memory_order_acquire);
    data = static_cast<std::uint32_t>(v);
    return static_cast<std::uint32_t>(v >> 32) == flagAt(u);
  }
  // Copies a message of `bytes` at `tail` to dst if its last unit is written (then every unit is: the
  // sender writes in order with release stores; each is still checked) and returns true; else false
  // (before touching dst when the last unit is missing). Waiting for the last unit rather than chasing the writer unit by unit keeps
  // the lines it still writes from moving back and forth.
  bool tryRead(std::uint64_t tail, std::byte* dst, std::size_t bytes) const;
  // Whether tryRead would find the message of `bytes` at `tail` complete.
  [[nodiscard]] bool messageReady(std::uint64_t tail, std::size_t bytes) const {
    if (bytes == 0) return true;
    std::uint32_t data = 0;
    return unitReady(tail + (bytes + kLlDataBytesPerUnit - 1) / kLlDataBytesPerUnit - 1, data);
  }

 private:
  [[nodiscard]] std::uint32_t flagAt(std::uint64_t unit) const {
    return static_cast<std::uint32_t>((unit >> ringShift_) & periodMask_) + 1;
  }
  [[nodiscard]] LlLine& line(std::uint64_t unit) const {
    return lines_[static_cast<std::size_t>((unit / kLlUnitsPerLine) & lineMask_)];
  }

  LlLine* lines_ = nullptr;
  int ringShift_ = 0;         // ring units = 1 << ringShift_
  std::uint64_t lineMask_ = 0;    // ring lines - 1
  std::uint64_t periodMask_ = 0;  // flag period - 1
};

// The reader's tail from its published 32-bit count of units read (`acked`), seen from the sender's
// `head`: the reader is at most a ring behind.
constexpr std::uint64_t llTailFromAcked(std::uint64_t head, std::uint32_t acked) {
  return head - static_cast<std::uint32_t>(static_cast<std::uint32_t>(head) - acked);
}

// One direction of LL traffic between two ranks: its ring, the sender's head and cached room, the
// reader's tail, and two words `Word` (a FutexWord of futex.h): `bell`, which a reader waiting for data
// sleeps on, and `acked`, the units read (mod 2^32) that the reader publishes after each message and a
// sender waiting for room sleeps on. The sender reads acked only when its cached room says the ring
// may be full, so on the fast path a message costs the reader one cache-line transfer and nothing else.
// The sender's and the reader's positions sit on cache lines of their own: a link may be shared by a
// sending and a reading thread, or each process may keep its own copy of the positions it uses.
template <class Word>
class LlLink {
 public:
  LlLink() = default;
  LlLink(const LlRing& ring, Word* bell, Word* acked) : ring_(ring), bell_(bell), acked_(acked) {
    sender_.room = ring.ringUnits();
  }
  [[nodiscard]] const LlRing& ring() const { return ring_; }
  [[nodiscard]] Word& bell() const { return *bell_; }
  [[nodiscard]] Word& acked() const { return *acked_; }

  // ---- sender side ----
  // Whether a message of `bytes` fits behind what the reader has not read yet (reloads acked when the
  // cached room says no). bytes must be at most the ring.
  bool hasRoom(std::size_t bytes) {
    const std::uint64_t end = sender_.head + llUnitsFor(bytes);
    if (end <= sender_.room) return true;
    sender_.room = llTailFromAcked(sender_.head, acked_->value.load(std::memory_order_acquire)) + ring_.ringUnits();
    return end <= sender_.room;
  }
  // Writes the message at the head (hasRoom() said yes) and advances the head.
  void write(const std::byte* src, std::size_t bytes) { sender_.head = ring_.write(sender_.head, src, bytes); }

  // ---- reader side ----
  // Whether unit i of the next message is there; `data` gets its 4 data bytes when it is.
  bool unitReady(std::size_t i, std::uint32_t& data) const { return ring_.unitReady(tail_ + i, data); }
  // Whether the next message, of `bytes`, is complete (its last unit is there).
  [[nodiscard]] bool messageReady(std::size_t bytes) const { return ring_.messageReady(tail_, bytes); }
  // Starts fetching the line of the last unit of the next message, of `bytes` > 0 (a hint).
  void prefetch(std::size_t bytes) const { ring_.prefetch(tail_ + (bytes + kLlDataBytesPerUnit - 1) / kLlDataBytesPerUnit - 1); }
  // Copies the next message, of `bytes`, to dst and ends its read (finishRead) if it is complete; else false.
  bool tryRead(std::byte* dst, std::size_t bytes) {
    if (!ring_.tryRead(tail_, dst, bytes)) return false;
    finishRead(bytes);
    return true;
  }
  // Ends the read of a message of `bytes`: moves the tail past its lines and publishes it in acked.
  void finishRead(std::size_t bytes) {
    tail_ += llUnitsFor(bytes);
    acked_->value.store(static_cast<std::uint32_t>(tail_), std::memory_order_release);
  }

 private:
  LlRing ring_;
  Word* bell_ = nullptr;
  Word* acked_ = nullptr;
  struct alignas(64) SenderState {
    std::uint64_t head = 0;  // units written
    std::uint64_t room = 0;  // head may grow up to this without reloading acked
  } sender_;
  alignas(64) std::uint64_t tail_ = 0;  // units read
};

// Wakes the peers asleep on the links a rank wrote to (data: bell) or read from (room: acked), and
// forgets the links. The fence orders the rank's line and acked stores before its reads of the sleeper
// counts; a sleeper counts itself (a locked add) before its last check, so one of the two sees the other.
template <class Word>
void llFlushWakes(std::vector<LlLink<Word>*>& sent, std::vector<LlLink<Word>*>& read) {
  if (sent.empty() && read.empty()) return;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (LlLink<Word>* l : sent)
    if (l->bell().sleepers.load(std::memory_order_relaxed) != 0) l->bell().add(1);
  for (LlLink<Word>* l : read)
    if (l->acked().sleepers.load(std::memory_order_relaxed) != 0) l->acked().wakeAll();
  sent.clear();
  read.clear();
}

}  // namespace cclab
