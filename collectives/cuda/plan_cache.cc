#include "collectives/cuda/plan_cache.h"

namespace cclab::cuda {

std::string PlanRequest::key() const {
  std::string k;
  appendKey(k, collective);
  appendKey(k, algorithm);
  appendKey(k, nranks);
  appendKey(k, count);
  appendKey(k, root);
  appendKey(k, shape.channels);
  appendKey(k, shape.ranksPerNode);
  appendKey(k, sliceElems);
  for (const BufferAlias& a : aliases) {
    appendKey(k, a.kind);
    appendKey(k, a.offset);
  }
  return k;
}

std::shared_ptr<const LoweredPlan> LoweredPlanCache::get(const PlanRequest& request) {
  const std::string key = request.key();
  std::lock_guard lock(mutex_);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  if (plans_.size() >= kMaxEntries) plans_.clear();
  const plan::Plan p = plan::makePlan(request.collective, request.algorithm, request.nranks, request.count, request.root,
                                        request.shape);
  auto lowered = std::make_shared<const LoweredPlan>(lowerPlan(p, request.sliceElems, request.aliases));
  plans_.emplace(key, lowered);
  return lowered;
}

}  // namespace cclab::cuda
