// OpSource: a plan's ops, asked for one at a time (op(rank, i)) instead of held in memory.
//
// A materialized Plan grows with ranks x steps: the ring allreduce has 4(p-1) ops per rank, so 8192
// ranks are 268 M ops, 19 GB of 72-byte Ops. Every op of the ring and of the hierarchical allreduce
// follows from a rule (rank, index) -> op, so a consumer that walks ops one after the other (the
// simulator's replay) can ask the rule instead of the plan. OpSource is that question:
//   - PlanOpSource answers it from a materialized Plan (any algorithm);
//   - the rule sources (op_source_ring.cc, op_source_hierarchical.cc) compute op i of rank r from the
//     algorithm's rule in O(1), holding O(ranks x channels) state;
//   - makeOpSource picks the rule where one exists, else materializes makePlan's plan.
// Contract: op(r, i) for i < size(r) is, after dropping ops of count 0, exactly makePlan's rank r
// list (tests/plan/op_source_test.cc checks this op for op). A rule may list empty ops (count 0) where
// makePlan drops them: every SliceWalker skips an empty op (it has no slice), so a walk is the same.
// Ops are channel by channel, as in a Plan; channelBegin gives where each channel's ops start.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "collectives/plan/plan.h"

namespace cclab::plan {

// A plan's header: everything of Plan but its ops.
struct PlanInfo {
  Collective collective = Collective::AllReduce;
  Algorithm algorithm = Algorithm::Ring;
  int nranks = 1;
  std::int64_t count = 0;
  int root = 0;
  int nphases = 1;
  int nchannels = 1;
  int ranksPerNode = 0;
  std::int64_t scratchCount = 0;
  std::vector<PhaseDep> deps;
};
PlanInfo infoOf(const Plan& plan);

// One connection a rank uses: to or from `peer` on `channel`.
struct PeerLink {
  int peer = -1;
  bool out = false;  // true: the rank sends to peer; false: it receives from peer
  int channel = 0;
  friend bool operator==(const PeerLink&, const PeerLink&) = default;
};

class OpSource {
 public:
  explicit OpSource(const PlanInfo& info) : info_(info) {}
  virtual ~OpSource() = default;
  OpSource(const OpSource&) = delete;
  OpSource& operator=(const OpSource&) = delete;

  [[nodiscard]] const PlanInfo& info() const { return info_; }
  [[nodiscard]] int nranks() const { return info_.nranks; }
  // Number of ops of rank r (a rule's count includes its empty ops).
  [[nodiscard]] virtual std::int64_t size(int rank) const = 0;
  // Op i of rank r, 0 <= i < size(r).
  [[nodiscard]] virtual Op op(int rank, std::int64_t i) const = 0;
  // Index of rank r's first op of channel c (channelBegin(r, nchannels) = size(r)). Default: a binary
  // search over op(r, i).channel.
  [[nodiscard]] virtual std::int64_t channelBegin(int rank, int channel) const;
  // Rank r's runs of ops of one channel, [begin, end) each, in order, leaving out channels without
  // ops (an executor's agents). Default: from channelBegin.
  [[nodiscard]] virtual std::vector<std::pair<std::int64_t, std::int64_t>> channelRuns(int rank) const;
  // The largest op count of all ranks (auto slicing). Default: a scan of every op.
  [[nodiscard]] virtual std::int64_t maxOpCount() const;
  // Op-slices (sliceCount summed over every op of every rank) with slices of sliceElems; a result
  // above `limit` may be any value above it (the scan stops there). Default: a scan of every op.
  [[nodiscard]] virtual std::int64_t opSlices(std::int64_t sliceElems, std::int64_t limit) const;
  // The connections rank r's non-empty ops use, each once (a ReduceAll receives from every other
  // rank). Default: a scan of the rank's ops; the rules list them directly where no op is empty.
  [[nodiscard]] virtual std::vector<PeerLink> links(int rank) const;
  // Sum of size(r) over all ranks.
  [[nodiscard]] std::int64_t totalOps() const;

 protected:
  PlanInfo info_;
};

// The ops of a Plan held in memory (the Plan must outlive the source, or be moved in).
class PlanOpSource final : public OpSource {
 public:
  explicit PlanOpSource(const Plan& plan) : OpSource(infoOf(plan)), plan_(&plan) {}
  explicit PlanOpSource(Plan&& plan) : OpSource(infoOf(plan)), owned_(std::make_unique<Plan>(std::move(plan))), plan_(owned_.get()) {}
  [[nodiscard]] std::int64_t size(int rank) const override {
    return static_cast<std::int64_t>(plan_->ranks[static_cast<std::size_t>(rank)].size());
  }
  [[nodiscard]] Op op(int rank, std::int64_t i) const override {
    return plan_->ranks[static_cast<std::size_t>(rank)][static_cast<std::size_t>(i)];
  }
  // Runs of equal Op::channel, as they stand in the plan's list.
  [[nodiscard]] std::vector<std::pair<std::int64_t, std::int64_t>> channelRuns(int rank) const override;
  [[nodiscard]] std::int64_t maxOpCount() const override;
  [[nodiscard]] const Plan& plan() const { return *plan_; }

 private:
  std::unique_ptr<Plan> owned_;
  const Plan* plan_;
};

// Rule sources (nullptr-free factories; arguments as makePlan, already checked by makeOpSource).
std::unique_ptr<OpSource> ringAllReduceSource(int nranks, std::int64_t count, PlanShape shape, Algorithm named);
std::unique_ptr<OpSource> hierarchicalAllReduceSource(int nranks, std::int64_t count, PlanShape shape);

// The ops of makePlan(c, a, nranks, count, root, shape): a rule source for the allreduce ring and
// hierarchical algorithms, else a PlanOpSource owning makePlan's plan. Throws as makePlan does.
std::unique_ptr<OpSource> makeOpSource(Collective c, Algorithm a, int nranks, std::int64_t count, int root = 0,
                                       PlanShape shape = {});

// Rank r's ops [begin, end) of a source as a random-access range (what SliceWalker walks).
struct SourceOps {
  const OpSource* source = nullptr;
  int rank = 0;
  std::int64_t begin = 0, end = 0;
  [[nodiscard]] std::size_t size() const { return static_cast<std::size_t>(end - begin); }
  [[nodiscard]] Op operator[](std::size_t i) const { return source->op(rank, begin + static_cast<std::int64_t>(i)); }
};

}  // namespace cclab::plan
