#include "collectives/mpi/mpi_executor.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "collectives/core/error_text.h"
#include "collectives/core/errors.h"
#include "collectives/core/poll_wait.h"
#include "collectives/mpi/mpi_links.h"
#include "collectives/plan/plan_runner.h"
#include "collectives/proc/shm_node.h"

namespace cclab::mpi {
namespace {

std::string where(const plan::Plan& p) {
  return "proc " + std::string(plan::name(p.collective)) + "/" + std::string(plan::name(p.algorithm));
}

// The MPI transport (plan_runner.h) of one rank's run of one plan: its sends in flight, its lanes'
// posted receives, and the wait that polls.
class RankRun {
 public:
  struct LaneData {
    std::vector<MPI_Request> recvs;  // per receive of the current slice (its index)
    std::vector<std::byte*> into;    // where each lands (nullptr: not posted)
    std::vector<std::byte> staging;  // RecvReduce, ReduceAll: received slices
  };
  using Lane = plan::RunnerLane<LaneData>;

  // node: where the waits are published and blamed (mpi_executor.h), or null; call: this rank's call
  // number there.
  RankRun(const World& world, const plan::Plan& plan, const MpiMemory& mem, const MpiRunOptions& o, proc::ShmNode* node,
          std::uint32_t call)
      : world_(world), plan_(plan), mem_(mem), o_(o), rank_(world.rank()), sends_(world), node_(node), call_(call),
        idle_({.spin = o.spin}, o.timeout) {}
  ~RankRun() {
    if (node_) node_->publishWait(-1);  // between calls this rank waits for nobody
  }
  RankRun(const RankRun&) = delete;
  RankRun& operator=(const RankRun&) = delete;

  void execute(plan::RunnerState<LaneData>& state) {
    plan::PlanRunner<RankRun>(*this, state, plan_, rank_, {o_.elemSize, o_.reduce, o_.sliceElems, true}).run();
  }

  std::byte* address(const plan::Range& r, std::int64_t lo) const { return mem_.at(r, lo, o_.elemSize); }
  // Lanes are kept between calls: a call that failed may have left receives posted; forget them, as a
  // new lane would.
  static void startLane(Lane& lane) {
    std::fill(lane.data.into.begin(), lane.data.into.end(), nullptr);
    std::fill(lane.data.recvs.begin(), lane.data.recvs.end(), MPI_REQUEST_NULL);
  }

  bool trySend(Lane& lane, const plan::Op& op, const std::byte* src, std::size_t bytes) {
    if (sends_.sendsInFlight() >= MpiExecutor::kMaxSendsInFlight && !sends_.prune())
      return block(lane, op.peer, "its sends to be received by");
    sends_.send(op.peer, op.channel, src, bytes);
    return true;
  }

  // Posts the receive on its first call (a Recv straight into its destination, the others into
  // staging), then tests it.
  const std::byte* tryReceive(Lane& lane, const plan::Op& op, int peer, std::byte* into, std::size_t bytes, int index) {
    LaneData& d = lane.data;
    const auto i = static_cast<std::size_t>(index);
    if (d.into.size() <= i) {
      d.into.resize(i + 1, nullptr);
      d.recvs.resize(i + 1, MPI_REQUEST_NULL);
    }
    if (!d.into[i]) {
      d.into[i] = into ? into : plan::stagingSlot(d.staging, op, plan_.nranks, index, bytes);
      check(MPI_Irecv(d.into[i], messageBytes(bytes), MPI_BYTE, peer, op.channel, world_.comm(), &d.recvs[i]), "MPI_Irecv");
    }
    int flag = 0;
    check(MPI_Test(&d.recvs[i], &flag, MPI_STATUS_IGNORE), "MPI_Test");
    if (flag) return d.into[i];
    block(lane, peer, "data from");
    return nullptr;
  }

  void release(Lane& lane, const plan::Op& op, int peer) {
    lane.data.into[static_cast<std::size_t>(plan::receiveIndex(op, peer, rank_))] = nullptr;
  }

  // May [dst, dst+bytes) be written: no send from there still in flight?
  bool writable(Lane& lane, const std::byte* dst, std::size_t bytes) {
    sends_.prune();
    int peer = -1;
    return !sends_.inFlight(dst, bytes, peer) || block(lane, peer, "its sends to be received by");
  }

  // Every send of the rank received (sends are the rank's, not a channel's).
  bool drained(Lane& lane) {
    sends_.prune();
    int peer = -1;
    return !sends_.inFlight(nullptr, SIZE_MAX, peer) || block(lane, peer, "its last sends to be received by");
  }

  // Polls (collectives/core/poll_wait.h): busy for `spin` after the last progress, then yielding the
  // core (oversubscribed cores: let the peer run); no progress for `timeout` throws: with a node, by
  // its rule (after remoteGrace more when the chain of waits leaves the node), else naming the ranks
  // waited for.
  void waitForLanes(std::span<Lane>, Lane&, int, bool moved) {
    const int peer = waitingFor_.empty() ? -1 : waitingFor_.front();
    if (node_) {
      node_->publishWait(peer);  // a peer that times out follows its chain of waits through this rank
      if (node_->aborted()) node_->failWait(site(), peer, what_, o_.timeout);  // "stopped by rank R"
    }
    if (sends_.prune() || moved) {
      progress();
      return;
    }
    if (idle_.idle()) return;
    if (!node_ || peer < 0) {
      std::string peers;
      for (int q : waitingFor_) peers += (peers.empty() ? "" : ", ") + std::to_string(q);
      throw TimeoutError(where(plan_) + ": rank " + std::to_string(rank_) + " timed out after " + millisecondsText(o_.timeout) +
                         " waiting for " + what_ + (peers.empty() ? "" : " rank " + peers));
    }
    const auto grace = proc::ShmNode::remoteGrace(o_.timeout);
    if (!graced_ && node_->chainLeavesNode(peer, call_)) {  // the ranks of the node at the chain's end report first
      graced_ = true;
      idle_ = IdlePoll({.spin = o_.spin}, grace);
      return;
    }
    node_->failWait(site(), peer, what_, graced_ ? o_.timeout + grace : o_.timeout);
  }

 private:
  // Records that the lane's step waits for `peer` (all the peers a step waits for); false.
  bool block(Lane& lane, int peer, const char* what) {
    if (!lane.blocked) waitingFor_.clear();
    lane.blocked = true;
    waitingFor_.push_back(peer);
    what_ = what;
    opIndex_ = lane.opIndex();
    return false;
  }

  // Something moved: the idle spell (and a grace given to it) starts over.
  void progress() {
    if (graced_) {
      graced_ = false;
      idle_ = IdlePoll({.spin = o_.spin}, o_.timeout);
    }
    idle_.progress();
  }

  [[nodiscard]] proc::ShmNode::WaitSite site() const { return {&plan_, opIndex_, call_}; }

  const World& world_;
  const plan::Plan& plan_;
  const MpiMemory& mem_;
  const MpiRunOptions& o_;
  int rank_;
  MpiLinks sends_;  // the sends in flight
  proc::ShmNode* node_;
  std::uint32_t call_;
  std::vector<int> waitingFor_;
  const char* what_ = "data from";
  std::size_t opIndex_ = 0;  // the op of the last blocked step, for the error line
  IdlePoll idle_;  // the timeout counts from the last progress, only time this rank ran
  bool graced_ = false;  // idle_ runs remoteGrace past the timeout (the chain of waits left the node)
};

}  // namespace

struct MpiExecutor::Runner {
  plan::RunnerState<RankRun::LaneData> state;
};

MpiExecutor::MpiExecutor(const World& world, proc::ShmNode* node)
    : world_(world), node_(node), runner_(std::make_unique<Runner>()) {}
MpiExecutor::~MpiExecutor() = default;

void MpiExecutor::run(const plan::Plan& plan, const MpiMemory& memory, const MpiRunOptions& options) {
  if (plan.nranks != world_.size())
    throw InvalidArgument("proc: plan for " + std::to_string(plan.nranks) + " ranks in a job of " +
                          std::to_string(world_.size()));
  if (!options.reduce && plan::reduces(plan.collective))
    throw InvalidArgument("proc: a reducing collective needs a reduce function");
  std::uint32_t call = 0;
  if (node_) {
    node_->throwIfAborted(plan);  // a rank that resumes after the job was aborted: "stopped by rank R"
    call = node_->arrive();       // the peers tell a rank that never started this call from one that waits
  }
  RankRun(world_, plan, memory, options, node_, call).execute(runner_->state);
}

}  // namespace cclab::mpi
