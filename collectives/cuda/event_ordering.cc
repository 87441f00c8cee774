#include "collectives/cuda/event_ordering.h"

#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/kernels.h"

namespace cclab::cuda {

namespace {

void waitFor(const std::vector<StepRef>& waits, cudaStream_t stream, CudaContext& ctx) {
  for (const StepRef& w : waits) {
    RankState& peer = ctx.rank(w.rank);
    const cudaEvent_t e = w.step == StepRef::kStart ? peer.startEvent() : peer.stepEvent(static_cast<std::size_t>(w.step));
    CCLAB_CUDA_CHECK(cudaStreamWaitEvent(stream, e, 0));
  }
}

void enqueueStep(const PreparedCall& call, CudaContext& ctx, int rank, const Step& s) {
  RankState& rs = ctx.rank(rank);
  const std::size_t elem = sizeOf(call.type);
  const auto bytes = static_cast<std::size_t>(s.count()) * elem;
  void* dst = address(call.pointers[static_cast<std::size_t>(rank)], rank, s.dst, elem);
  const void* local =
      s.kind == StepKind::Reduce ? address(call.pointers[static_cast<std::size_t>(rank)], rank, s.local, elem) : nullptr;
  const void* src = address(call.pointers[static_cast<std::size_t>(s.srcRank)], s.srcRank, s.src, elem);
  const int srcDevice = ctx.map().device(s.srcRank);
  if (!ctx.devices().canRead(rs.device(), srcDevice)) {  // staged: a copy engine brings the peer's slice over
    if (s.kind == StepKind::Copy) {
      CCLAB_CUDA_CHECK(cudaMemcpyPeerAsync(dst, rs.device(), src, srcDevice, bytes, rs.lane()));
      return;
    }
    void* staged = rs.staging(bytes);  // reserved before the call (never grows here)
    CCLAB_CUDA_CHECK(cudaMemcpyPeerAsync(staged, rs.device(), src, srcDevice, bytes, rs.lane()));
    src = staged;
  }
  const LaunchGeometry grid =
      reduceCopyGeometry(static_cast<std::int64_t>(bytes), ctx.smCount(rs.device()), ctx.map().ranksOn(rs.device()));
  launchReduceCopy(rs.lane(), call.type, call.op, {dst, local, src, s.count()}, grid);
}

}  // namespace

void enqueueSteps(const PreparedCall& call, CudaContext& ctx) {
  const LoweredPlan& lp = *call.lowered;
  for (int r = 0; r < lp.nranks; ++r) {
    RankState& rs = ctx.rank(r);
    DeviceGuard guard(rs.device());
    if (r == call.stragglerRank) launchSpin(rs.lane(), call.stragglerDelayNs);
    if (lp.ranks[static_cast<std::size_t>(r)].startSignals) CCLAB_CUDA_CHECK(cudaEventRecord(rs.startEvent(), rs.lane()));
  }
  for (const StepRef& ref : lp.issueOrder) {
    RankState& rs = ctx.rank(ref.rank);
    const Step& s = lp.ranks[static_cast<std::size_t>(ref.rank)].steps[static_cast<std::size_t>(ref.step)];
    DeviceGuard guard(rs.device());
    waitFor(s.waits, rs.lane(), ctx);
    enqueueStep(call, ctx, ref.rank, s);
    if (s.signals) CCLAB_CUDA_CHECK(cudaEventRecord(rs.stepEvent(static_cast<std::size_t>(ref.step)), rs.lane()));
  }
  const std::size_t elem = sizeOf(call.type);
  for (int r = 0; r < lp.nranks; ++r) {
    RankState& rs = ctx.rank(r);
    DeviceGuard guard(rs.device());
    waitFor(lp.ranks[static_cast<std::size_t>(r)].finalWaits, rs.lane(), ctx);
    const AvgFinish& avg = call.avg[static_cast<std::size_t>(r)];
    if (avg.count > 0)
      launchFinishAvg(rs.lane(), call.type, avg.data, avg.count, lp.nranks,
                      reduceCopyGeometry(avg.count * static_cast<std::int64_t>(elem), ctx.smCount(rs.device()),
                                         ctx.map().ranksOn(rs.device())));
    CCLAB_CUDA_CHECK(cudaEventRecord(rs.doneEvent(), rs.lane()));
  }
}

}  // namespace cclab::cuda
