// The executors' order, written once: every consumer of a plan (interpret.h, the host and CUDA
// executors, the simulator's replay) walks a rank's ops with SliceWalker.
//
// Order (plan.h): channel by channel (when walking all of a rank's ops), phase by phase; inside a phase slice-major: slice 0 of every op of the phase in op
// order, then slice 1, and so on; an op with fewer slices than the phase's longest is skipped once its
// slices are done; empty ops have no slice at all.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "collectives/plan/plan.h"

namespace cclab::plan {

// Number of slices an op of `count` elements is cut into (0 for an empty op; 1 when sliceElems <= 0).
inline std::int64_t sliceCount(std::int64_t count, std::int64_t sliceElems) {
  if (count <= 0) return 0;
  if (sliceElems <= 0) return 1;
  return (count + sliceElems - 1) / sliceElems;
}

// Walks one rank's (op, slice) pairs in executor order, over all its ops (its channels one after the
// other) or one channel's span (channelOps). `Step` is anything with `count()` (elements) and `phase`:
// plan::Op, or a consumer's compiled form of it. `Steps` is any random-access range of them (size()
// and operator[], by reference or by value): a span of a plan's ops, or a rank's ops asked one at a
// time from an OpSource (op_source.h: SourceOps). The walker keeps a copy of the current step
// (current()), so a range that computes its ops is asked for each op a bounded number of times per
// slice round.
template <class Step, class Steps = std::span<const Step>>
class SliceWalker {
 public:
  SliceWalker(Steps steps, std::int64_t sliceElems) : steps_(std::move(steps)), slice_(sliceElems) { startPhase(0); }
  [[nodiscard]] bool done() const { return phaseBegin_ >= steps_.size(); }
  [[nodiscard]] std::size_t opIndex() const { return op_; }
  [[nodiscard]] std::int64_t sliceIndex() const { return round_; }
  // The op at opIndex() (valid while !done()).
  [[nodiscard]] const Step& current() const { return cur_; }
  // Element range [lo, hi) of the current slice, relative to the op's range.
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> sliceRange() const {
    const std::int64_t n = cur_.count();
    if (slice_ <= 0) return {0, n};
    return {round_ * slice_, std::min(n, (round_ + 1) * slice_)};
  }
  void advance() {
    ++op_;
    settle();
  }

 private:
  void startPhase(std::size_t begin) {
    const auto& s = steps_;
    const std::size_t n = s.size();
    phaseBegin_ = begin;
    phaseEnd_ = begin;
    rounds_ = 0;
    if (slice_ <= 0 && begin < n) {  // whole ops: one round over every op left, in op order (no phase scan)
      phaseEnd_ = n;
      rounds_ = 1;
    } else if (begin < n) {
      const Step first = s[begin];
      for (; phaseEnd_ < n; ++phaseEnd_) {
        const Step st = s[phaseEnd_];
        if (st.phase != first.phase || !sameChannel(st, first)) break;
        rounds_ = std::max(rounds_, sliceCount(st.count(), slice_));
      }
    }
    round_ = 0;
    op_ = begin;
    settle();
  }
  // A channel change ends a phase too, so walking all of a rank's ops runs its channels one after the
  // other (every rank in the same order), never slice-interleaved.
  static bool sameChannel(const Step& a, const Step& b) {
    if constexpr (requires { a.channel; }) return a.channel == b.channel;
    return true;
  }
  // Move to the next op of this round that has a slice in it, or to the next round or phase.
  void settle() {
    const auto& s = steps_;
    while (phaseBegin_ < s.size()) {
      for (; op_ < phaseEnd_; ++op_) {
        cur_ = s[op_];
        if (sliceCount(cur_.count(), slice_) > round_) return;
      }
      if (++round_ < rounds_) {
        op_ = phaseBegin_;
        continue;
      }
      startPhase(phaseEnd_);
      return;
    }
  }

  Steps steps_;
  std::int64_t slice_;
  std::size_t phaseBegin_ = 0, phaseEnd_ = 0, op_ = 0;
  std::int64_t round_ = 0, rounds_ = 0;
  Step cur_{};
};

// The walker over a plan's own ops (the interpreter and the executors).
using SliceCursor = SliceWalker<Op>;

}  // namespace cclab::plan
