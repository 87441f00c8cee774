#include "collectives/cuda/ll_ordering.h"

#include <algorithm>
#include <string>

#include "collectives/core/errors.h"
#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/kernels.h"

namespace cclab::cuda {
namespace {

// Per device: a progress word and an arrival counter for each program slot (a program is a rank's
// channel; a plan's programs on the device take slots 0, 1, ...), and the abort word.
constexpr std::size_t kSlots = kMaxLlPrograms;
std::size_t flagsBytes() { return kSlots * sizeof(unsigned long long) + (kSlots + 1) * sizeof(unsigned int); }

LlStep toLlStep(const Step& s, std::int32_t waitBegin) {
  LlStep o;
  o.dstOff = s.dst.offset;
  o.localOff = s.local.offset;
  o.srcOff = s.src.offset;
  o.count = s.count();
  o.srcRank = s.srcRank;
  o.waitBegin = waitBegin;
  o.waitCount = static_cast<std::int32_t>(s.waits.size());
  o.reduce = s.kind == StepKind::Reduce ? 1 : 0;
  o.dstBuf = static_cast<std::uint8_t>(s.dst.buf);
  o.localBuf = static_cast<std::uint8_t>(s.local.buf);
  o.srcBuf = static_cast<std::uint8_t>(s.src.buf);
  return o;
}

// Copies a table to the device on `stream`, the stream the persistent kernel runs on, so the kernel is
// ordered after the copy (a plain cudaMemcpy would use the legacy default stream, which does not order
// the non-blocking streams the ranks use). From pageable memory the call returns once `v` was staged,
// so `v` may be freed afterwards.
template <class T>
DeviceMemory upload(int device, cudaStream_t stream, const std::vector<T>& v) {
  DeviceMemory mem(device, std::max<std::size_t>(1, v.size()) * sizeof(T));
  if (!v.empty())
    CCLAB_CUDA_CHECK(cudaMemcpyAsync(mem.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  return mem;
}

}  // namespace

unsigned long long* LowLatencyOrdering::DeviceState::progress(int local) const {
  return static_cast<unsigned long long*>(flags.get()) + local;
}
unsigned int* LowLatencyOrdering::DeviceState::arrive() const {
  return reinterpret_cast<unsigned int*>(static_cast<unsigned long long*>(flags.get()) + kSlots);
}
unsigned int* LowLatencyOrdering::DeviceState::abortFlag() const { return arrive() + kSlots; }

LowLatencyOrdering::LowLatencyOrdering(CudaContext& context) : context_(context) {
  const DeviceMap& map = context.map();
  if (map.nranks() > kMaxLlRanks)
    throw InvalidArgument("cuda ll: at most " + std::to_string(kMaxLlRanks) + " ranks, got " + std::to_string(map.nranks()));
  if (!context.devices().allDirect())
    throw Error("cuda ll: needs peer access between all devices (use order=events, which stages copies)");
  for (int d = 0; d < map.devicesUsed(); ++d) {
    if (!context.devices().info(d).cooperativeLaunch)
      throw Error("cuda ll: device " + std::to_string(d) + " does not support cooperative launches");
    DeviceState s;
    s.device = d;
    s.ranks = map.ranksOf(d);
    s.flags = DeviceMemory(d, flagsBytes());
    s.stream = context.rank(s.ranks.front()).stream();
    {
      DeviceGuard guard(d);  // on the kernel's stream (see upload), then settled before any call
      CCLAB_CUDA_CHECK(cudaMemsetAsync(s.flags.get(), 0, s.flags.bytes(), s.stream));
      CCLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream));
    }
    devices_.push_back(std::move(s));
  }
  reports_ = MappedHostMemory(0, sizeof(LlErrorReport) * devices_.size());
}

const std::vector<LowLatencyOrdering::DeviceTables>& LowLatencyOrdering::tablesFor(const PreparedCall& call) {
  if (auto it = tables_.find(call.planKey); it != tables_.end()) return it->second;
  if (tables_.size() >= kMaxTables) {  // a queued kernel may still read a table: drain before freeing
    for (const DeviceState& d : devices_) {
      DeviceGuard guard(d.device);
      CCLAB_CUDA_CHECK(cudaStreamSynchronize(d.stream));
    }
    tables_.clear();
  }
  const LoweredPlan& lp = *call.lowered;
  if (lp.programs.size() > static_cast<std::size_t>(kMaxLlPrograms))
    throw InvalidArgument("cuda ll: at most " + std::to_string(kMaxLlPrograms) + " programs (ranks x channels), got " +
                          std::to_string(lp.programs.size()) + "; use fewer channels or order=events");
  std::vector<DeviceTables> all;
  for (const DeviceState& d : devices_) {
    std::vector<LlStep> steps;
    std::vector<LlWait> waits;
    DeviceTables t;
    for (int r : d.ranks)
      for (int program = lp.firstProgram[static_cast<std::size_t>(r)]; program < lp.firstProgram[static_cast<std::size_t>(r) + 1];
           ++program) {
        const RankProgram& prog = lp.programs[static_cast<std::size_t>(program)];
        LlRankSlot slot;
        slot.rank = r;
        slot.program = program;
        slot.stepBegin = static_cast<std::int32_t>(steps.size());
        slot.stepCount = static_cast<std::int32_t>(prog.steps.size());
        for (const Step& s : prog.steps) {
          steps.push_back(toLlStep(s, static_cast<std::int32_t>(waits.size())));
          for (const StepRef& w : s.waits) waits.push_back({w.program, w.step});
          t.maxStepElems = std::max(t.maxStepElems, s.count());
        }
        slot.finalBegin = static_cast<std::int32_t>(waits.size());
        slot.finalCount = static_cast<std::int32_t>(prog.finalWaits.size());
        for (const StepRef& w : prog.finalWaits) waits.push_back({w.program, w.step});
        t.slots.push_back(slot);
      }
    DeviceGuard guard(d.device);
    t.steps = upload(d.device, d.stream, steps);
    t.waits = upload(d.device, d.stream, waits);
    all.push_back(std::move(t));
  }
  return tables_.emplace(call.planKey, std::move(all)).first->second;
}

void LowLatencyOrdering::run(const PreparedCall& call) {
  auto* reports = static_cast<const volatile LlErrorReport*>(reports_.host());
  for (std::size_t d = 0; d < devices_.size(); ++d)
    if (reports[d].flag) {  // an earlier call timed out and nobody synchronized since
      for (int r = 0; r < context_.nranks(); ++r) CCLAB_CUDA_CHECK(cudaStreamSynchronize(context_.rank(r).stream()));
      checkErrors();
    }
  const std::vector<DeviceTables>& tables = tablesFor(call);
  const std::size_t elem = sizeOf(call.type);
  const bool crossDevice = devices_.size() > 1;
  ++seq_;
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    const DeviceState& dev = devices_[d];
    const DeviceTables& t = tables[d];
    DeviceGuard guard(dev.device);
    LlKernelParams p;
    p.steps = static_cast<const LlStep*>(t.steps.get());
    p.waits = static_cast<const LlWait*>(t.waits.get());
    p.nLocal = static_cast<int>(t.slots.size());
    for (int i = 0; i < p.nLocal; ++i) p.local[i] = t.slots[static_cast<std::size_t>(i)];
    for (std::size_t od = 0; od < devices_.size(); ++od)  // program -> its slot's word on its device
      for (std::size_t i = 0; i < tables[od].slots.size(); ++i) {
        const LlRankSlot& slot = tables[od].slots[i];
        p.progress[slot.program] = devices_[od].progress(static_cast<int>(i));
        p.programRank[slot.program] = slot.rank;
      }
    for (int r = 0; r < context_.nranks(); ++r)
      for (int b = 0; b < 3; ++b) p.base[r][b] = call.pointers[static_cast<std::size_t>(r)].base[b];
    p.arrive = dev.arrive();
    p.abortFlag = dev.abortFlag();
    p.report = static_cast<LlErrorReport*>(reports_.deviceView()) + d;
    p.seq = seq_;
    p.timeoutNs = call.timeoutNs;
    p.stragglerRank = call.stragglerRank;
    p.stragglerDelayNs = call.stragglerDelayNs;
    p.systemScope = crossDevice ? 1 : 0;

    const auto key = std::make_pair(static_cast<int>(call.type), static_cast<int>(call.op));
    auto& resident = maxResident_[key];
    if (resident == 0) resident = lowLatencyMaxResidentBlocks(call.type, call.op, context_.smCount(dev.device));
    const LowLatencyGeometry grid =
        lowLatencyGeometry(t.maxStepElems * static_cast<std::int64_t>(elem), p.nLocal, resident);

    p.blocksPerRank = grid.blocksPerRank;  // the kernel finds its program as blockIdx / blocksPerRank
    launchLowLatency(dev.stream, call.type, call.op, p, grid);
    for (int r : dev.ranks) {
      const AvgFinish& avg = call.avg[static_cast<std::size_t>(r)];
      if (avg.count > 0)
        launchFinishAvg(dev.stream, call.type, avg.data, avg.count, context_.nranks(),
                        reduceCopyGeometry(avg.count * static_cast<std::int64_t>(elem), context_.smCount(dev.device),
                                           p.nLocal));
    }
  }
}

void LowLatencyOrdering::resetAfterError() {
  for (DeviceState& dev : devices_) {
    DeviceGuard guard(dev.device);
    CCLAB_CUDA_CHECK(cudaStreamSynchronize(dev.stream));
    CCLAB_CUDA_CHECK(cudaMemsetAsync(dev.flags.get(), 0, dev.flags.bytes(), dev.stream));
    CCLAB_CUDA_CHECK(cudaStreamSynchronize(dev.stream));
  }
  auto* reports = static_cast<volatile LlErrorReport*>(reports_.host());
  for (std::size_t d = 0; d < devices_.size(); ++d) reports[d].flag = 0;
  seq_ = 0;
}

void LowLatencyOrdering::checkErrors() {
  auto* reports = static_cast<const volatile LlErrorReport*>(reports_.host());
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    if (!reports[d].flag) continue;
    const int rank = reports[d].rank, waited = reports[d].waitedRank, step = reports[d].waitedStep;
    resetAfterError();
    const std::string what = step < 0 ? "to start" : "to finish its step " + std::to_string(step);
    throw TimeoutError("cuda ll: rank " + std::to_string(rank) + " timed out waiting for rank " + std::to_string(waited) +
                       " " + what + " (device " + std::to_string(devices_[d].device) + ")");
  }
}

}  // namespace cclab::cuda
