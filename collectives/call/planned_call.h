// PlannedCall: the one front end of every communicator that runs plans (host threads, processes, CUDA,
// GPUs in processes). In order, for one call: the algorithm resolved (auto), the arguments, the plan's
// shape and the slicing checked, the buffer counts, each rank's buffers checked for null, the plan
// found in a bounded cache (PlanCache), and after the run Avg's division on the ranks that reduced.
// A backend supplies only what is its own: its default slice and channels, where its memory lives, and
// the executor it hands the plan to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>

#include "collectives/call/communicator_base.h"
#include "collectives/call/vocabulary.h"
#include "collectives/plan/plan.h"

namespace cclab {

// Whether `rank` writes an output (reduce: the root only).
[[nodiscard]] inline bool writesOutput(const CollectiveArgs& args, int rank) {
  return args.collective != plan::Collective::Reduce || rank == args.root;
}
// Whether `rank`'s output is a reduction, so Avg divides it after the run (rooted collectives: the root).
[[nodiscard]] inline bool averagesOn(const CollectiveArgs& args, int rank) {
  return args.op == ReduceOp::Avg && plan::reduces(args.collective) && (!plan::isRooted(args.collective) || rank == args.root);
}
// Throws InvalidArgument "<who>: rank R passed a null buffer" when `rank` passed null for a buffer the
// call reads or writes (`counts`: plan::bufferCounts of the call).
void checkRankBuffers(std::string_view who, const CollectiveArgs& args, const plan::BufferCounts& counts, int rank,
                      RankBuffers buffers);

// The call, resolved and checked. Cheap (no allocation): made once per call, or once per group call
// for every rank.
class PlannedCall {
 public:
  // Resolves the algorithm (comm.resolve) and checks args, shape and slicing; `defaultSliceBytes` is
  // the backend's slice when options.sliceBytes is 0 (0: whole ops). Throws InvalidArgument.
  PlannedCall(const Communicator& comm, const CollectiveArgs& args, const CollectiveOptions& options,
              std::size_t defaultSliceBytes);

  [[nodiscard]] const CollectiveArgs& args() const { return args_; }
  [[nodiscard]] plan::Algorithm algorithm() const { return algorithm_; }
  [[nodiscard]] int nranks() const { return nranks_; }
  [[nodiscard]] const plan::BufferCounts& counts() const { return counts_; }
  [[nodiscard]] std::size_t elemSize() const { return elem_; }
  [[nodiscard]] std::size_t inputBytes() const { return static_cast<std::size_t>(counts_.input) * elem_; }
  [[nodiscard]] std::size_t outputBytes() const { return static_cast<std::size_t>(counts_.output) * elem_; }
  // The slice in elements (at least 1; 0 when the backend and the call both ask for whole ops).
  [[nodiscard]] std::int64_t sliceElems() const { return sliceElems_; }

  // The plan's shape: the call's channels and ranks per node, else the backend's defaults.
  [[nodiscard]] plan::PlanShape shape(const CollectiveOptions& options, int defaultChannels, int defaultRanksPerNode) const {
    return {options.channels > 0 ? options.channels : defaultChannels,
            options.ranksPerNode > 0 ? options.ranksPerNode : defaultRanksPerNode};
  }
  [[nodiscard]] plan::Plan makePlan(plan::PlanShape shape) const {
    return plan::makePlan(args_.collective, algorithm_, nranks_, args_.count, args_.root, shape);
  }

  [[nodiscard]] bool writesOutput(int rank) const { return cclab::writesOutput(args_, rank); }
  [[nodiscard]] bool averages(int rank) const { return averagesOn(args_, rank); }
  // "<who>: rank R passed a null buffer" when `rank`'s buffers miss one the call uses.
  void checkBuffers(std::string_view who, int rank, RankBuffers buffers) const {
    checkRankBuffers(who, args_, counts_, rank, buffers);
  }
  // Avg's division of `rank`'s output in host memory, where the rank reduced (else nothing).
  void finishAvgOnHost(int rank, void* recv) const;
  // The executor's options for `rank`: element size, reduce function, slice, timeout, and the
  // straggler's start delay when `rank` is the straggler.
  [[nodiscard]] RunOptions runOptions(const CollectiveOptions& options, int rank) const;

 private:
  CollectiveArgs args_;
  plan::Algorithm algorithm_;
  int nranks_;
  plan::BufferCounts counts_;
  std::size_t elem_;
  std::int64_t sliceElems_;
};

// A plan cache key: everything a plan depends on besides nranks (collective, algorithm, count, root,
// channels, ranks per node).
using PlanKey = std::tuple<plan::Collective, plan::Algorithm, std::int64_t, int, int, int>;
[[nodiscard]] inline PlanKey planKey(const CollectiveArgs& args, plan::Algorithm algorithm, plan::PlanShape shape) {
  return {args.collective, algorithm, args.count, args.root, shape.channels, shape.ranksPerNode};
}

// Entries a plan cache holds before it starts again from empty (a benchmark sweep reuses a few dozen).
inline constexpr std::size_t kMaxCachedPlans = 256;

// A bounded map from a call's key to what a backend keeps per plan (the plan, a lowering, ...), with
// the last hit remembered so that a loop of identical calls skips the map. Not thread-safe: one per
// rank, or behind the caller's lock. References stay valid until the cache is cleared (when full).
template <class Value, class Key = PlanKey>
class PlanCache {
 public:
  explicit PlanCache(std::size_t capacity = kMaxCachedPlans) : capacity_(capacity) {}

  // The entry for `key`, made by `make()` on a miss.
  template <class Make>
  Value& get(const Key& key, Make&& make) {
    if (last_ && key == lastKey_) return *last_;
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      if (entries_.size() >= capacity_) entries_.clear();
      it = entries_.emplace(key, std::forward<Make>(make)()).first;
    }
    lastKey_ = key;
    last_ = &it->second;
    return it->second;
  }

 private:
  std::size_t capacity_;
  std::map<Key, Value> entries_;
  Key lastKey_{};
  Value* last_ = nullptr;
};

}  // namespace cclab
