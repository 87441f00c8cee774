#include "collectives/cuda/graph_ordering.h"

#include <algorithm>
#include <vector>

#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/event_ordering.h"
#include "collectives/cuda/plan_cache.h"

namespace cclab::cuda {
namespace {

std::string graphKey(const PreparedCall& call) {
  std::string k = call.planKey;
  appendKey(k, call.type);
  appendKey(k, call.op);
  for (const RankPointers& p : call.pointers) appendKey(k, p);
  appendKey(k, call.stragglerRank);
  appendKey(k, call.stragglerDelayNs);
  return k;
}

// Ends a capture that an exception interrupted, so the stream is usable again.
class CaptureScope {
 public:
  explicit CaptureScope(cudaStream_t s) : stream_(s) {
    CCLAB_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  }
  ~CaptureScope() {
    if (!stream_) return;
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(stream_, &g);  // failure expected: the capture was invalidated
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
  }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
  cudaGraph_t end() {
    cudaGraph_t g = nullptr;
    const cudaStream_t s = stream_;
    stream_ = nullptr;
    CCLAB_CUDA_CHECK(cudaStreamEndCapture(s, &g));
    return g;
  }

 private:
  cudaStream_t stream_;
};

}  // namespace

GraphOrdering::GraphOrdering(CudaContext& context)
    : context_(context), originDevice_(context.rank(0).device()), origin_(context.rank(0).stream()),
      fork_(makeEvent(originDevice_)), replayed_(makeEvent(originDevice_)) {}

GraphExec GraphOrdering::capture(const PreparedCall& call) {
  DeviceGuard guard(originDevice_);
  Graph graph;
  {
    CaptureScope scope(origin_);
    CCLAB_CUDA_CHECK(cudaEventRecord(fork_.get(), origin_));
    for (int r = 0; r < context_.nranks(); ++r) {
      RankState& rs = context_.rank(r);
      if (rs.lane() == origin_) continue;
      DeviceGuard rankGuard(rs.device());
      CCLAB_CUDA_CHECK(cudaStreamWaitEvent(rs.lane(), fork_.get(), 0));
    }
    enqueueSteps(call, context_);  // ends with each rank's done event
    for (int r = 0; r < context_.nranks(); ++r)
      CCLAB_CUDA_CHECK(cudaStreamWaitEvent(origin_, context_.rank(r).doneEvent(), 0));
    graph = Graph(originDevice_, scope.end());
  }
  cudaGraphExec_t exec = nullptr;
  CCLAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph.get(), 0));
  return GraphExec(originDevice_, exec);
}

void GraphOrdering::run(const PreparedCall& call) {
  const std::string key = graphKey(call);
  auto it = graphs_.find(key);
  if (it == graphs_.end()) {
    if (graphs_.size() >= kMaxGraphs) graphs_.clear();
    it = graphs_.emplace(key, capture(call)).first;
  }
  DeviceGuard guard(originDevice_);
  std::vector<RankState*> others;  // one rank per shared stream other than the origin
  for (int r = 0; r < context_.nranks(); ++r) {
    RankState& rs = context_.rank(r);
    if (rs.stream() == origin_) continue;
    if (std::none_of(others.begin(), others.end(), [&](RankState* o) { return o->stream() == rs.stream(); }))
      others.push_back(&rs);
  }
  for (RankState* rs : others) {  // the replay starts after their earlier work
    DeviceGuard rankGuard(rs->device());
    CCLAB_CUDA_CHECK(cudaEventRecord(rs->readyEvent(), rs->stream()));
    CCLAB_CUDA_CHECK(cudaStreamWaitEvent(origin_, rs->readyEvent(), 0));
  }
  CCLAB_CUDA_CHECK(cudaGraphLaunch(it->second.get(), origin_));
  if (others.empty()) return;
  CCLAB_CUDA_CHECK(cudaEventRecord(replayed_.get(), origin_));
  for (RankState* rs : others) {  // and their later work after the replay
    DeviceGuard rankGuard(rs->device());
    CCLAB_CUDA_CHECK(cudaStreamWaitEvent(rs->stream(), replayed_.get(), 0));
  }
}

}  // namespace cclab::cuda
