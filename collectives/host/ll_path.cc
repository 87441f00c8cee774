// LlPath (ll_path.h): the choice of the LL path for a call, per-rank plan caches, and the run.
#include "collectives/host/ll_path.h"

#include <algorithm>
#include <optional>
#include <string>
#include <thread>

#include <pthread.h>
#include <sched.h>

#include "collectives/core/knobs.h"

namespace cclab::host {
static_assert(knobs::knob(knobs::Id::LlMaxBytes).max == static_cast<std::int64_t>(kLlMaxBytesLimit),
              "CCLAB_LL_MAX_BYTES's range is kLlMaxBytesLimit");

std::size_t llMaxBytesFromEnvironment(std::size_t fallback) {
  const std::optional<std::int64_t> bytes = knobs::integer(knobs::Id::LlMaxBytes);
  return bytes ? static_cast<std::size_t>(*bytes) : fallback;
}

namespace {
void bindToCpu(int rank) {
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<unsigned>(rank) % cores, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // best effort: a refusal leaves it unbound
}
}  // namespace

LlPath::LlPath(int nranks, std::chrono::nanoseconds spin, std::size_t maxBytes, LlConfig config)
    : maxBytes_(maxBytes), executor_(nranks, spin, config),
      caches_(std::make_unique<RankCache[]>(static_cast<std::size_t>(std::max(nranks, 1)))) {}

const LlPath::Entry& LlPath::entryFor(RankCache& cache, const Key& key) {
  return cache.plans.get(key, [&] {
    const auto& [collective, algo, count, root, elem, channels, ranksPerNode] = key;
    auto p = std::make_shared<const plan::Plan>(
        plan::makePlan(collective, algo, executor_.nranks(), count, root, plan::PlanShape{channels, ranksPerNode}));
    Entry e;
    if (executor_.fits(*p, elem)) e.plan = std::move(p);
    return e;
  });
}

const plan::Plan* LlPath::planFor(int rank, const CollectiveArgs& args, plan::Algorithm algo, plan::PlanShape shape) {
  if (maxBytes_ == 0) return nullptr;
  const std::size_t elem = sizeOf(args.type);
  const plan::BufferCounts counts = plan::bufferCounts(args.collective, executor_.nranks(), args.count);
  if (static_cast<std::size_t>(std::max(counts.input, counts.output)) * elem > maxBytes_) return nullptr;
  RankCache& cache = caches_[static_cast<std::size_t>(rank)];
  return entryFor(cache, {args.collective, algo, args.count, args.root, elem, shape.channels, shape.ranksPerNode}).plan.get();
}

void LlPath::runShare(std::span<const int> ranks, const CollectiveArgs& args, const plan::Plan& plan,
                      std::span<const RankBuffers> buffers, const CollectiveOptions& options, std::chrono::nanoseconds spin) {
  RankCache& lead = boundCache(ranks.front());
  const std::size_t elem = sizeOf(args.type);
  const int p = executor_.nranks();
  const plan::BufferCounts counts = plan::bufferCounts(args.collective, p, args.count);
  const auto scratchBytes = static_cast<std::size_t>(plan.scratchCount) * elem;
  lead.share.clear();
  for (int rank : ranks) {
    const RankBuffers& b = buffers[static_cast<std::size_t>(rank)];
    checkRankBuffers("host", args, counts, rank, b);
    auto& scratch = caches_[static_cast<std::size_t>(rank)].scratch;
    if (scratch.size() < scratchBytes) scratch.resize(scratchBytes);
    lead.share.push_back({static_cast<const std::byte*>(b.send), static_cast<std::byte*>(b.recv), scratch.data()});
  }
  RunOptions ro;
  ro.elemSize = elem;
  ro.reduce = hostReduceFn(args.type, args.op);
  ro.timeout = options.timeout;
  executor_.runRanks(ranks, plan, lead.share, ro, spin);
  for (int rank : ranks)
    if (averagesOn(args, rank))
      finishAvg(buffers[static_cast<std::size_t>(rank)].recv, static_cast<std::size_t>(counts.output), args.type, p);
}

LlRankCall LlPath::lower(int rank, const CollectiveArgs& args, const plan::Plan& plan, RankBuffers buffers,
                         const CollectiveOptions& options) {
  RankCache& cache = caches_[static_cast<std::size_t>(rank)];
  const std::size_t elem = sizeOf(args.type);
  const int p = executor_.nranks();
  const plan::BufferCounts counts = plan::bufferCounts(args.collective, p, args.count);
  checkRankBuffers("host", args, counts, rank, buffers);
  const auto scratchBytes = static_cast<std::size_t>(plan.scratchCount) * elem;
  if (cache.scratch.size() < scratchBytes) cache.scratch.resize(scratchBytes);

  LlRankCall call;
  call.memory = {static_cast<const std::byte*>(buffers.send), static_cast<std::byte*>(buffers.recv), cache.scratch.data()};
  call.options.elemSize = elem;
  call.options.reduce = hostReduceFn(args.type, args.op);
  call.options.timeout = options.timeout;
  if (options.straggler.rank == rank) call.options.startDelay = options.straggler.startDelay;
  if (averagesOn(args, rank)) {
    call.avgOutput = buffers.recv;
    call.avgCount = static_cast<std::size_t>(counts.output);
  }
  call.type = args.type;
  return call;
}

LlPath::RankCache& LlPath::boundCache(int rank) {
  RankCache& cache = caches_[static_cast<std::size_t>(rank)];
  if (bind_ && !cache.bound) {  // at the rank's first call on its thread
    bindToCpu(rank);
    cache.bound = true;
  }
  return cache;
}

void LlPath::runLowered(int rank, const plan::Plan& plan, const LlRankCall& call) {
  boundCache(rank);  // binds the thread at its first call
  executor_.run(rank, plan, call.memory, call.options);
  if (call.avgOutput) finishAvg(call.avgOutput, call.avgCount, call.type, executor_.nranks());
}

void LlPath::runGatherSend(int rank, const plan::Plan& plan, const LlRankCall& call) {
  boundCache(rank);  // binds the thread at its first call
  executor_.gatherSend(rank, plan, call.memory, call.options);
}

void LlPath::runGatherFold(const plan::Plan& plan, const LlRankCall& call, std::span<std::byte* const> outputs) {
  boundCache(0);  // binds the thread at its first call
  executor_.gatherFold(plan, call.memory, outputs, call.options);
  if (call.avgOutput)
    for (std::byte* out : outputs) finishAvg(out, call.avgCount, call.type, executor_.nranks());
}

bool LlPath::run(int rank, const CollectiveArgs& args, plan::Algorithm algo, plan::PlanShape shape,
                 RankBuffers buffers, const CollectiveOptions& options) {
  RankCache& cache = boundCache(rank);  // every call passes here first, LL or not
  if (maxBytes_ == 0) return false;
  const std::size_t elem = sizeOf(args.type);
  const plan::BufferCounts counts = plan::bufferCounts(args.collective, executor_.nranks(), args.count);
  if (static_cast<std::size_t>(std::max(counts.input, counts.output)) * elem > maxBytes_) return false;
  const Entry& entry =
      entryFor(cache, {args.collective, algo, args.count, args.root, elem, shape.channels, shape.ranksPerNode});
  if (!entry.plan) return false;
  runLowered(rank, *entry.plan, lower(rank, args, *entry.plan, buffers, options));
  return true;
}

ArrivalStats mergeArrivalStats(const ArrivalStats& a, const ArrivalStats& b) {
  ArrivalStats out;
  out.calls = a.calls + b.calls;
  out.incomplete = a.incomplete || b.incomplete;
  out.ranks.resize(std::max(a.ranks.size(), b.ranks.size()));
  for (std::size_t r = 0; r < out.ranks.size(); ++r) {
    RankArrivals& o = out.ranks[r];
    for (const ArrivalStats* s : {&a, &b}) {
      if (r >= s->ranks.size()) continue;
      const RankArrivals& x = s->ranks[r];
      o.calls += x.calls;
      o.totalLateness += x.totalLateness;
      o.maxLateness = std::max(o.maxLateness, x.maxLateness);
      o.lastCount += x.lastCount;
    }
  }
  return out;
}

}  // namespace cclab::host
