#include "collectives/cuda/event_ordering.h"

#include <cstddef>

#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/kernels.h"

namespace cclab::cuda {

namespace {

// A program's stream: its rank's lane for the rank's first program, a channel stream for the others,
// so a rank's channels run side by side.
cudaStream_t streamOf(const LoweredPlan& lp, CudaContext& ctx, int program) {
  const RankProgram& prog = lp.programs[static_cast<std::size_t>(program)];
  const int index = program - lp.firstProgram[static_cast<std::size_t>(prog.rank)];
  RankState& rs = ctx.rank(prog.rank);
  return index == 0 ? rs.lane() : rs.channelStream(static_cast<std::size_t>(index - 1));
}

void waitFor(const LoweredPlan& lp, const std::vector<StepRef>& waits, cudaStream_t stream, CudaContext& ctx) {
  for (const StepRef& w : waits) {
    const RankProgram& prog = lp.programs[static_cast<std::size_t>(w.program)];
    RankState& peer = ctx.rank(prog.rank);
    const cudaEvent_t e = w.step == StepRef::kStart
                              ? peer.startEvent()
                              : peer.stepEvent(static_cast<std::size_t>(prog.eventBase + w.step));
    CCLAB_CUDA_CHECK(cudaStreamWaitEvent(stream, e, 0));
  }
}

// `channel`: the program's index among its rank's programs (each channel stages into its own part).
void enqueueStep(const PreparedCall& call, CudaContext& ctx, int rank, cudaStream_t stream, std::size_t channel,
                 const Step& s) {
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
      CCLAB_CUDA_CHECK(cudaMemcpyPeerAsync(dst, rs.device(), src, srcDevice, bytes, stream));
      return;
    }
    const std::size_t part = static_cast<std::size_t>(call.lowered->maxStepElems) * elem;  // a channel's part
    void* staged = static_cast<std::byte*>(rs.staging(part * (channel + 1))) + part * channel;  // reserved before the call
    CCLAB_CUDA_CHECK(cudaMemcpyPeerAsync(staged, rs.device(), src, srcDevice, bytes, stream));
    src = staged;
  }
  const LaunchGeometry grid =
      reduceCopyGeometry(static_cast<std::int64_t>(bytes), ctx.smCount(rs.device()), ctx.map().ranksOn(rs.device()));
  launchReduceCopy(stream, call.type, call.op, {dst, local, src, s.count()}, grid);
}

}  // namespace

void enqueueSteps(const PreparedCall& call, CudaContext& ctx) {
  const LoweredPlan& lp = *call.lowered;
  for (int r = 0; r < lp.nranks; ++r) {
    RankState& rs = ctx.rank(r);
    DeviceGuard guard(rs.device());
    if (r == call.stragglerRank) launchSpin(rs.lane(), call.stragglerDelayNs);
    const auto programs = lp.programsOf(r);
    bool signals = programs.size() > 1;  // the channel streams start after the rank's lane
    for (const RankProgram& prog : programs) signals = signals || prog.startSignals;
    if (signals) CCLAB_CUDA_CHECK(cudaEventRecord(rs.startEvent(), rs.lane()));
    for (std::size_t i = 1; i < programs.size(); ++i)
      CCLAB_CUDA_CHECK(cudaStreamWaitEvent(rs.channelStream(i - 1), rs.startEvent(), 0));
  }
  for (const StepRef& ref : lp.issueOrder) {
    const RankProgram& prog = lp.programs[static_cast<std::size_t>(ref.program)];
    RankState& rs = ctx.rank(prog.rank);
    const Step& s = prog.steps[static_cast<std::size_t>(ref.step)];
    const cudaStream_t stream = streamOf(lp, ctx, ref.program);
    DeviceGuard guard(rs.device());
    waitFor(lp, s.waits, stream, ctx);
    enqueueStep(call, ctx, prog.rank, stream,
                static_cast<std::size_t>(ref.program - lp.firstProgram[static_cast<std::size_t>(prog.rank)]), s);
    if (s.signals)
      CCLAB_CUDA_CHECK(cudaEventRecord(rs.stepEvent(static_cast<std::size_t>(prog.eventBase + ref.step)), stream));
  }
  const std::size_t elem = sizeOf(call.type);
  for (int r = 0; r < lp.nranks; ++r) {
    RankState& rs = ctx.rank(r);
    DeviceGuard guard(rs.device());
    const auto programs = lp.programsOf(r);
    for (std::size_t i = 0; i < programs.size(); ++i) {
      const int program = lp.firstProgram[static_cast<std::size_t>(r)] + static_cast<int>(i);
      waitFor(lp, programs[i].finalWaits, rs.lane(), ctx);
      if (i == 0) continue;
      CCLAB_CUDA_CHECK(cudaEventRecord(rs.channelDoneEvent(i - 1), streamOf(lp, ctx, program)));
      CCLAB_CUDA_CHECK(cudaStreamWaitEvent(rs.lane(), rs.channelDoneEvent(i - 1), 0));  // join the channel
    }
    const AvgFinish& avg = call.avg[static_cast<std::size_t>(r)];
    if (avg.count > 0)
      launchFinishAvg(rs.lane(), call.type, avg.data, avg.count, lp.nranks,
                      reduceCopyGeometry(avg.count * static_cast<std::int64_t>(elem), ctx.smCount(rs.device()),
                                         ctx.map().ranksOn(rs.device())));
    CCLAB_CUDA_CHECK(cudaEventRecord(rs.doneEvent(), rs.lane()));
  }
}

}  // namespace cclab::cuda
